import { create, isMessage, type DescMethod } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type HandlerContext,
  type UnaryResponse,
} from '@connectrpc/connect';
import type { ServiceRoutes } from './service-routes.js';
import { methodPath, NEVER_ABORTED, type UnaryCall } from './unary-chain.js';

type UnaryImpl = (request: unknown, context: HandlerContext) => unknown;

export type UnaryDispatcher = {
  /** Calls the implementation of `request.method` (no interceptors). */
  call: UnaryCall;
  /** The unary method served at `/<service type name>/<method name>`, if any. */
  methodAt(path: string): DescMethod | undefined;
};

/**
 * The unary methods registered by `routes`, captured without a Connect router, and a call
 * that hands a request message to its implementation and answers the response message with
 * proto3 defaults filled in (issue 8: the in-process transport, and the RPC server's fast
 * path for Connect unary calls). Implementations get a context whose `signal` never aborts:
 * deadlines are the caller's (no service implementation reads it).
 */
export function createUnaryDispatcher(routes: ServiceRoutes): UnaryDispatcher {
  const methods = new Map<DescMethod, UnaryImpl>();
  const paths = new Map<string, DescMethod>();
  const register = (method: DescMethod, impl: UnaryImpl) => {
    methods.set(method, impl);
    if (method.methodKind === 'unary') paths.set(methodPath(method), method);
  };
  const unimplemented = (method: DescMethod): UnaryImpl => {
    const message = `${method.parent.typeName}.${method.name} is not implemented`;
    return () => {
      throw new ConnectError(message, Code.Unimplemented);
    };
  };
  const router = {
    handlers: [],
    service(service, implementation) {
      for (const method of service.methods) {
        const impl: unknown = (implementation as Record<string, unknown>)[method.localName];
        register(
          method,
          typeof impl === 'function'
            ? (impl.bind(implementation) as UnaryImpl)
            : unimplemented(method),
        );
      }
      return router;
    },
    rpc(method, impl) {
      register(method, impl as UnaryImpl);
      return router;
    },
  } as ConnectRouter;
  routes(router);

  return {
    methodAt: (path) => paths.get(path),
    async call(request) {
      const impl = methods.get(request.method);
      if (impl === undefined) {
        throw new ConnectError(`${request.method.name} is not served here`, Code.Unimplemented);
      }
      const responseHeader = new Headers();
      const responseTrailer = new Headers();
      const context = {
        method: request.method,
        service: request.service,
        signal: NEVER_ABORTED,
        timeoutMs: () => undefined,
        requestMethod: request.requestMethod,
        requestHeader: request.header,
        responseHeader,
        responseTrailer,
        values: request.contextValues,
        url: request.url,
        peer: { addr: 'in-process' },
        abort: () => undefined,
      } as unknown as HandlerContext;
      const answer = await impl(request.message, context);
      const output = request.method.output;
      return {
        stream: false,
        service: request.service,
        method: request.method,
        header: responseHeader,
        trailer: responseTrailer,
        message: isMessage(answer, output) ? answer : create(output, answer as never),
      } as UnaryResponse;
    },
  };
}
