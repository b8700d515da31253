// The Connect contracts between the edge and the internal services, generated from proto/
// by `pnpm generate` (buf + protoc-gen-es). Do not edit files under ./gen by hand.
// audit-record-kinds.ts is hand-written: the kinds of audit record the services share.
export * from './gen/common/v1/error_pb.js';
export * from './gen/grpc/health/v1/health_pb.js';
export * from './gen/registry/v1/registry_pb.js';
export * from './gen/authflow/v1/authflow_pb.js';
export * from './gen/authflow/v1/session_introspection_pb.js';
export * from './gen/authflow/v1/login_batches_pb.js';
export * from './gen/onboarding/v1/onboarding_pb.js';
export * from './gen/onboarding/v1/profile_pb.js';
export * from './audit-record-kinds.js';
