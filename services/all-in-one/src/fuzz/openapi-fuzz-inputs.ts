import fc from 'fast-check';

// Requests for every operation of the gateway's own OpenAPI document, built by fast-check
// from the operation's parameters and request body schema: values of the declared shape
// mixed with hostile ones (malformed percent-encoding, U+0000, unpaired surrogates, control
// and bidi characters, deep nesting, huge, negative and fractional numbers, reserved and
// empty member names, unknown properties, wrong types) and three kinds of caller.

/** The parts of an OpenAPI 3.1 document the generator reads. */
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
};
type Parameter = { name: string; in: string; schema?: JsonSchema };
type OpenApiOperation = {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
};
export type OpenApiDocument = {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
};

export type Caller = 'admin' | 'platform' | 'user' | 'anonymous';

/** The error body an operation documents: the spec's, or OAuth 2.0's (RFC 6749 5.2). */
export type ErrorBodyShape = 'gateway' | 'oauth';

export type FuzzRequest = {
  operationId: string;
  /** The shape its error answers must have. */
  errorBody: ErrorBodyShape;
  method: string;
  /** Path and query, percent-encoded as sent. */
  target: string;
  caller: Caller;
  contentType?: string;
  body?: string;
};

/** Strings no handler expects; each is one of the hostile inputs the edge must refuse. */
const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\u202egnp.exe',
  '\u0007\u001b[31m',
  '\t\n',
  '__proto__',
  'constructor',
  '../../etc/passwd',
  '/app/..;/admin',
  '%ff',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '😀',
  'x'.repeat(5000),
];

const HOSTILE_NUMBERS = [
  -1,
  0,
  0.5,
  -0.5,
  1e308,
  -1e308,
  2 ** 53 + 2,
  -(2 ** 63),
  Number.MAX_SAFE_INTEGER,
];

/** Segments of a path parameter, written as sent (so malformed escapes stay malformed). */
const HOSTILE_SEGMENTS = ['%ff', '%00', '%c0%af', '%', '%e2%80%ae', '..', '%2e%2e', '%2f', 'SHOP'];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

const hostileNumber = fc.oneof(fc.constantFrom(...HOSTILE_NUMBERS), fc.double({ noNaN: true }));

/** A JSON value of any shape, with reserved and empty member names among the keys. */
const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(hostileString, fc.constantFrom('', '__proto__')), tie('value'), {
      maxKeys: 3,
    }),
  ),
})).value;

/**
 * `{"a":{"a":...1}}` nested `depth` levels, as text (JSON.stringify itself would run out of
 * stack making it): what no recursive walk of a request may meet.
 */
export function deeplyNestedJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

function resolve(document: OpenApiDocument, schema: JsonSchema): JsonSchema {
  if (schema.$ref === undefined) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  return document.components?.schemas?.[name] ?? {};
}

/** A value of the schema's shape; `depth` bounds recursion through nested schemas. */
function shapedValue(document: OpenApiDocument, raw: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(document, raw);
  const variants = schema.anyOf ?? schema.oneOf ?? schema.allOf;
  if (variants !== undefined && variants.length > 0 && depth < 6) {
    return fc.oneof(...variants.map((variant) => shapedValue(document, variant, depth + 1)));
  }
  if (schema.enum !== undefined && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return fc.oneof(
        fc.string({ maxLength: 16 }),
        fc.constantFrom('SHOP', 'http://localhost:3000/app'),
      );
    case 'integer':
      return fc.integer({ min: 0, max: 200 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return depth < 6
        ? fc.array(shapedValue(document, schema.items ?? {}, depth + 1), { maxLength: 2 })
        : fc.constant([]);
    case 'object':
      return depth < 6 ? shapedObject(document, schema, depth) : fc.constant({});
    default:
      return hostileJson;
  }
}

/** An object of the schema's properties, each one sometimes hostile, sometimes one extra. */
function shapedObject(
  document: OpenApiDocument,
  schema: JsonSchema,
  depth: number,
): fc.Arbitrary<unknown> {
  const entries = Object.entries(schema.properties ?? {});
  const members = Object.fromEntries(
    entries.map(([name, property]) => [
      name,
      fc.oneof(
        { weight: 3, arbitrary: shapedValue(document, property, depth + 1) },
        { weight: 1, arbitrary: hostileJson },
      ),
    ]),
  );
  const required = (schema.required ?? []).filter((name) => name in members);
  const shaped = fc.record(members, { requiredKeys: required });
  const extra = fc.option(fc.tuple(hostileString, hostileJson), { freq: 5 });
  return fc.tuple(shaped, extra).map(([object, member]) => {
    if (member === null) return object;
    return { ...(object as Record<string, unknown>), [member[0]]: member[1] };
  });
}

/** The body as sent: JSON of the shape, hostile JSON, deep nesting, or not JSON at all. */
function bodyOf(
  document: OpenApiDocument,
  schema: JsonSchema,
): fc.Arbitrary<{ contentType: string; body: string }> {
  const json = (value: unknown) => ({
    contentType: 'application/json',
    body: JSON.stringify(value),
  });
  return fc.oneof(
    { weight: 6, arbitrary: shapedValue(document, schema).map(json) },
    { weight: 2, arbitrary: hostileJson.map(json) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(10, 40, 5000).map((depth) => ({
        contentType: 'application/json',
        body: `{"displayName":"x","metadata":${deeplyNestedJson(depth)}}`,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { contentType: 'application/json', body: '{"a":' },
        { contentType: 'application/json', body: '{"\\ud800":1,"metadata":{"\\udfff":"\\u0000"}}' },
        { contentType: 'text/plain', body: 'hello' },
        { contentType: 'application/json', body: '[]'.repeat(3) },
      ),
    },
  );
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * A form body as sent: the fields of the shape (strings, some hostile, some repeated, one
 * extra sometimes), malformed percent-encoding, or not a form at all.
 */
function formBodyOf(schema: JsonSchema): fc.Arbitrary<{ contentType: string; body: string }> {
  const encode = (text: string) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''));
  const field = fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength: 64 }) },
    { weight: 2, arbitrary: hostileString },
  );
  const names = Object.keys(schema.properties ?? {});
  const fields = fc.array(
    fc.tuple(fc.oneof(fc.constantFrom(...names, 'extra'), hostileString), field),
    { maxLength: 3 },
  );
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fields.map((pairs) => ({
        contentType: FORM,
        body: pairs.map(([name, value]) => `${encode(name)}=${encode(value)}`).join('&'),
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { contentType: FORM, body: '%%%&=&==%ff' },
        { contentType: FORM, body: `${names[0] ?? 'a'}=%ff%fe%00` },
        { contentType: 'application/json', body: '{"a":1}' },
        { contentType: 'text/plain', body: 'hello' },
      ),
    },
  );
}

/** Whether the operation answers its errors as OAuth 2.0 does (`OAuthErrorBody`). */
function errorBodyOf(operation: OpenApiOperation): ErrorBodyShape {
  const schema = operation.responses?.['400']?.content?.['application/json']?.schema;
  return schema?.$ref === '#/components/schemas/OAuthErrorBody' ? 'oauth' : 'gateway';
}

function parameterValue(document: OpenApiDocument, parameter: Parameter): fc.Arbitrary<string> {
  const shaped = shapedValue(document, parameter.schema ?? { type: 'string' }).map((value) =>
    encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value)),
  );
  return fc.oneof(
    { weight: 2, arbitrary: shaped },
    {
      weight: 2,
      arbitrary: hostileString.map((text) =>
        encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '')),
      ),
    },
    { weight: 1, arbitrary: hostileNumber.map((number) => encodeURIComponent(String(number))) },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
  );
}

/** The path with every `{name}` filled, and a query of the declared (and one unknown) names. */
function targetOf(
  document: OpenApiDocument,
  path: string,
  parameters: Parameter[],
): fc.Arbitrary<string> {
  const inPath = parameters.filter((parameter) => parameter.in === 'path');
  const inQuery = parameters.filter((parameter) => parameter.in === 'query');
  const pathValues = fc.tuple(...inPath.map((parameter) => parameterValue(document, parameter)));
  const queryValues = fc.tuple(
    ...inQuery.map((parameter) => fc.option(parameterValue(document, parameter), { freq: 3 })),
  );
  const unknown = fc.option(parameterValue(document, { name: 'unknown', in: 'query' }), {
    freq: 6,
  });
  return fc.tuple(pathValues, queryValues, unknown).map(([pathParts, queryParts, extra]) => {
    let filled = path;
    inPath.forEach((parameter, index) => {
      filled = filled.replace(`{${parameter.name}}`, pathParts[index] ?? '');
    });
    const query = inQuery
      .map((parameter, index) => [parameter.name, queryParts[index]] as const)
      .filter((entry): entry is readonly [string, string] => entry[1] !== null)
      .map(([name, value]) => `${name}=${value}`);
    if (extra !== null) query.push(`unknown=${extra}`);
    return query.length === 0 ? filled : `${filled}?${query.join('&')}`;
  });
}

const CALLERS: Caller[] = ['admin', 'admin', 'platform', 'user', 'user', 'anonymous'];

/** One arbitrary request to any operation of the document but the `excluded` ones. */
export function requestsOf(
  document: OpenApiDocument,
  excluded: ReadonlySet<string>,
): fc.Arbitrary<FuzzRequest> {
  const operations = Object.entries(document.paths)
    .flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
    )
    .filter(({ operation }) => !excluded.has(operation.operationId));
  return fc.oneof(
    ...operations.map(({ path, method, operation }) => {
      const content = operation.requestBody?.content;
      const schema = content?.['application/json']?.schema;
      const formSchema = content?.[FORM]?.schema;
      const body =
        formSchema !== undefined
          ? fc.option(formBodyOf(resolve(document, formSchema)), { freq: 8 })
          : schema === undefined
            ? fc.constant(undefined)
            : fc.option(bodyOf(document, schema), { freq: 8 });
      return fc
        .record({
          target: targetOf(document, path, operation.parameters ?? []),
          caller: fc.constantFrom(...CALLERS),
          body: body.map((value) => value ?? undefined),
        })
        .map(({ target, caller, body: sent }) => ({
          operationId: operation.operationId,
          errorBody: errorBodyOf(operation),
          method: method.toUpperCase(),
          target,
          caller,
          ...(sent === undefined ? {} : sent),
        }));
    }),
  );
}
