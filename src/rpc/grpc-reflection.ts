/**
 * gRPC server reflection (grpc.reflection.v1 and its predecessor v1alpha) for the h2c listener,
 * so grpcurl, buf curl, grpcui and Postman can list, describe and call every method without the
 * .proto files. connect-es ships no reflection service and no maintained package serves one
 * over a ConnectRouter, so it is built here from the descriptors the generated code already
 * embeds: each registered service's file and, transitively, its imports (the well-known types
 * included), serialized as FileDescriptorProto messages.
 */
import {
  create,
  type DescEnum,
  type DescFile,
  type DescMessage,
  type DescService,
  fromBinary,
  type MessageInitShape,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type ServerReflectionRequest,
  type ServerReflectionResponseSchema,
  ServerReflection as V1,
  ServerReflectionRequestSchema as V1RequestSchema,
  ServerReflectionResponseSchema as V1ResponseSchema,
} from "../../gen/grpc/reflection/v1/reflection_pb.ts";
import {
  ServerReflection as V1alpha,
  ServerReflectionRequestSchema as V1alphaRequestSchema,
  ServerReflectionResponseSchema as V1alphaResponseSchema,
} from "../../gen/grpc/reflection/v1alpha/reflection_pb.ts";

/** The two reflection services, by descriptor: register both (`createGrpcReflection`). */
export const REFLECTION_SERVICES = [V1, V1alpha] as const;

/** grpc::StatusCode values an ErrorResponse carries (the stream itself stays open). */
const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;

export interface GrpcReflection {
  v1: ServiceImpl<typeof V1>;
  v1alpha: ServiceImpl<typeof V1alpha>;
}

/** What the reflection answers from: the files of the served services and all they import. */
interface Index {
  services: string[];
  files: Map<string, DescFile>;
  /** Every fully-qualified name a client may ask for → the file declaring it. */
  symbols: Map<string, DescFile>;
  /** A message's full name → the extension numbers declared for it in these files. */
  extensions: Map<string, Map<number, DescFile>>;
  /** A file's serialized FileDescriptorProto, made once. */
  bytes: Map<DescFile, Uint8Array>;
}

function indexOf(services: readonly DescService[]): Index {
  const index: Index = {
    services: [...new Set(services.map((s) => s.typeName))].sort(),
    files: new Map(),
    symbols: new Map(),
    extensions: new Map(),
    bytes: new Map(),
  };
  const addEnum = (file: DescFile, e: DescEnum, scope: string) => {
    index.symbols.set(e.typeName, file);
    // protobuf scopes enum values beside their enum, not inside it.
    for (const value of e.values) index.symbols.set(`${scope}${value.name}`, file);
  };
  const addMessage = (file: DescFile, m: DescMessage) => {
    index.symbols.set(m.typeName, file);
    for (const field of m.fields) index.symbols.set(`${m.typeName}.${field.name}`, file);
    for (const oneof of m.oneofs) index.symbols.set(`${m.typeName}.${oneof.name}`, file);
    for (const nested of m.nestedMessages) addMessage(file, nested);
    for (const e of m.nestedEnums) addEnum(file, e, `${m.typeName}.`);
    for (const ext of m.nestedExtensions) addExtension(file, ext.typeName, ext.extendee.typeName, ext.number);
  };
  const addExtension = (file: DescFile, name: string, extendee: string, number: number) => {
    index.symbols.set(name, file);
    const numbers = index.extensions.get(extendee) ?? new Map<number, DescFile>();
    index.extensions.set(extendee, numbers.set(number, file));
  };
  const addFile = (file: DescFile) => {
    const name = file.proto.name;
    if (index.files.has(name)) return;
    index.files.set(name, file);
    index.bytes.set(file, toBinary(FileDescriptorProtoSchema, file.proto));
    const scope = file.proto.package ? `${file.proto.package}.` : "";
    for (const m of file.messages) addMessage(file, m);
    for (const e of file.enums) addEnum(file, e, scope);
    for (const ext of file.extensions) addExtension(file, ext.typeName, ext.extendee.typeName, ext.number);
    for (const s of file.services) {
      index.symbols.set(s.typeName, file);
      for (const m of s.methods) index.symbols.set(`${s.typeName}.${m.name}`, file);
    }
    for (const dependency of file.dependencies) addFile(dependency);
  };
  for (const service of services) addFile(service.file);
  return index;
}

/**
 * The file and every file it imports, transitively, the asked-for file first (as grpc-go
 * orders them). Sent whole on every answer: the protocol lets a server skip files it already
 * sent on the stream, but then a client that reads each answer on its own would miss imports,
 * and the files are few and small.
 */
function withImports(index: Index, file: DescFile): Uint8Array[] {
  const out: DescFile[] = [];
  const seen = new Set<DescFile>();
  const visit = (f: DescFile) => {
    if (seen.has(f)) return;
    seen.add(f);
    out.push(f);
    for (const dependency of f.dependencies) visit(dependency);
  };
  visit(file);
  return out.map((f) => index.bytes.get(f) ?? toBinary(FileDescriptorProtoSchema, f.proto));
}

type V1Response = MessageInitShape<typeof ServerReflectionResponseSchema>;

function answer(index: Index, request: ServerReflectionRequest): V1Response {
  const base = { validHost: request.host, originalRequest: request };
  const files = (file: DescFile | undefined, what: string): V1Response =>
    file
      ? {
          ...base,
          messageResponse: { case: "fileDescriptorResponse", value: { fileDescriptorProto: withImports(index, file) } },
        }
      : {
          ...base,
          messageResponse: {
            case: "errorResponse",
            value: { errorCode: NOT_FOUND, errorMessage: `${what} not found` },
          },
        };
  const q = request.messageRequest;
  switch (q.case) {
    case "listServices":
      return {
        ...base,
        messageResponse: { case: "listServicesResponse", value: { service: index.services.map((name) => ({ name })) } },
      };
    case "fileByFilename":
      return files(index.files.get(q.value), `file ${q.value}`);
    case "fileContainingSymbol":
      return files(index.symbols.get(q.value.replace(/^\./, "")), `symbol ${q.value}`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = q.value;
      const file = index.extensions.get(containingType)?.get(extensionNumber);
      return files(file, `extension ${extensionNumber} of ${containingType}`);
    }
    case "allExtensionNumbersOfType": {
      if (!index.symbols.has(q.value)) return files(undefined, `type ${q.value}`);
      const numbers = [...(index.extensions.get(q.value)?.keys() ?? [])].sort((a, b) => a - b);
      return {
        ...base,
        messageResponse: {
          case: "allExtensionNumbersResponse",
          value: { baseTypeName: q.value, extensionNumber: numbers },
        },
      };
    }
    default:
      return {
        ...base,
        messageResponse: {
          case: "errorResponse",
          value: { errorCode: INVALID_ARGUMENT, errorMessage: "no message_request set" },
        },
      };
  }
}

/**
 * Both reflection versions over the given services (list them all, the reflection services
 * included: `list_services` answers exactly these names). v1alpha's messages are v1's under
 * another package, field for field, so a v1alpha request is read as v1 from its bytes and the
 * answer written back the same way: one implementation serves both.
 */
export function createGrpcReflection(services: readonly DescService[]): GrpcReflection {
  const index = indexOf(services);
  const one = (request: ServerReflectionRequest) => answer(index, request);
  return {
    v1: {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) yield one(request);
      },
    },
    v1alpha: {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) {
          const asV1 = fromBinary(V1RequestSchema, toBinary(V1alphaRequestSchema, request));
          const reply = toBinary(V1ResponseSchema, create(V1ResponseSchema, one(asV1)));
          yield fromBinary(V1alphaResponseSchema, reply);
        }
      },
    },
  };
}
