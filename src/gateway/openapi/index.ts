/** OpenAPI v2 and v3 documents generated from the type definitions (built-in and custom resources), and their HTTP handler. */
export { buildOpenApiDocuments, OpenApiBuilder, PATCH_MEDIA_TYPES, type OpenApiDocuments, type GroupVersionDocument } from './documents';
export { createOpenApiHandler, isOpenApiPath, type OpenApiHandler, type OpenApiHandlerOptions } from './handler';
export { ServedDocuments, type ServedDocument } from './served';
export { encodeV2Protobuf } from './v2-protobuf';
export { openApiNames, type OpenApiNames } from './names';
export { filterV2ByGroupVersion, type RemoteOpenApi, type RemoteV2Spec } from './remote';
