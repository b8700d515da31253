export { errorStatusByCode, httpStatusOf, isErrorCode, type ErrorCode } from './error-codes.js';
export { GatewayError, isGatewayError, type ErrorBody } from './gateway-error.js';
export {
  createErrorInterceptor,
  fromConnectError,
  serviceErrorOf,
  toConnectError,
} from './connect-errors.js';
