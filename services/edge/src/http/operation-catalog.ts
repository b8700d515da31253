import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { errorStatusByCode } from '@gateway/errors';
import { openApiPath, securityOf, type AnyOperation } from './operation.js';
import { FORM_MEDIA_TYPE } from './request-body.js';

/** The error body of spec section 7, shared by every operation's error responses. */
export const ErrorBodySchema = z
  .object({
    code: z.enum(Object.keys(errorStatusByCode) as [string, ...string[]]),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'ErrorBody', description: 'Error body of every failed request.' });

/**
 * RFC 6749 5.2's error body, which the operations an identity provider calls answer
 * (Back-Channel Logout 1.0, 2.8).
 */
export const OAuthErrorBodySchema = z
  .object({
    error: z.enum(['invalid_request', 'temporarily_unavailable', 'server_error']),
    error_description: z.string(),
  })
  .meta({
    id: 'OAuthErrorBody',
    description: 'Error body of the operations an identity provider calls (RFC 6749 5.2).',
  });

/**
 * Every operation the edge serves, with its OpenAPI description. The edge builds the
 * OpenAPI 3.1 document from it once.
 */
export class OperationCatalog {
  private readonly registry = new OpenAPIRegistry();
  private readonly operationIds = new Set<string>();
  private document: string | undefined;

  constructor() {
    this.registry.registerComponent('securitySchemes', 'platformBasicAuth', {
      type: 'http',
      scheme: 'basic',
      description: 'A platform credential: base64(clientId:clientSecret).',
    });
    this.registry.registerComponent('securitySchemes', 'gatewayCookieAuth', {
      type: 'apiKey',
      in: 'cookie',
      name: 'svc_auth_session',
      description: 'The gateway session cookie. Writes need an allowlisted Origin.',
    });
    this.registry.registerComponent('securitySchemes', 'userBearerAuth', {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'Access token of a signed-in user from an active identity environment.',
    });
    this.registry.registerComponent('securitySchemes', 'serviceBearerAuth', {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'Machine (client_credentials) access token.',
    });
  }

  add(operation: AnyOperation): void {
    if (this.operationIds.has(operation.operationId)) {
      throw new Error(`operationId ${operation.operationId} is declared twice`);
    }
    this.document = undefined;
    this.operationIds.add(operation.operationId);
    const request: NonNullable<RouteConfig['request']> = {};
    if (operation.query !== undefined) request.query = operation.query as RouteConfigObject;
    if (operation.params !== undefined) request.params = operation.params as RouteConfigObject;
    if (operation.body !== undefined) {
      request.body = {
        // A body schema that accepts `undefined` makes the body optional (logout, spec 4.6).
        required: !operation.body.safeParse(undefined).success,
        content: {
          [operation.bodyEncoding === 'form' ? FORM_MEDIA_TYPE : 'application/json']: {
            schema: operation.body,
          },
        },
      };
    }
    if (operation.rawBody !== undefined) request.body = operation.rawBody.openApi;
    this.registry.registerPath({
      method: operation.method,
      path: openApiPath(operation.path),
      operationId: operation.operationId,
      summary: operation.summary,
      ...(operation.description === undefined ? {} : { description: operation.description }),
      tags: operation.tags,
      security: securityOf(operation.auth),
      request,
      responses: operation.responses,
    });
  }

  /** The OpenAPI 3.1 document, generated once and kept. */
  openApiJson(info: { baseUrl: string }): string {
    this.document ??= JSON.stringify(
      new OpenApiGeneratorV31(this.registry.definitions).generateDocument({
        openapi: '3.1.0',
        info: {
          title: 'Central Authentication Gateway',
          version: '1.0.0',
          description:
            'The gateway between web platforms and their OpenID Connect identity providers. ' +
            'Operational paths are under /v1; health paths are unversioned.',
        },
        servers: [{ url: info.baseUrl }],
      }),
    );
    return this.document;
  }
}

type RouteConfigObject = NonNullable<NonNullable<RouteConfig['request']>['query']>;
