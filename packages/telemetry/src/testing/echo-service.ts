// A one-method Connect service for tests, described without codegen: the descriptor is built
// from a FileDescriptorProto here and hydrated with the same helpers generated code uses.
import { create, toBinary } from '@bufbuild/protobuf';
import type { Message } from '@bufbuild/protobuf';
import { fileDesc, messageDesc, serviceDesc } from '@bufbuild/protobuf/codegenv2';
import type { GenFile, GenMessage, GenService } from '@bufbuild/protobuf/codegenv2';
import { base64Encode } from '@bufbuild/protobuf/wire';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
} from '@bufbuild/protobuf/wkt';

const textField = {
  name: 'text',
  jsonName: 'text',
  number: 1,
  type: FieldDescriptorProto_Type.STRING,
  label: FieldDescriptorProto_Label.OPTIONAL,
};

const echoProto = create(FileDescriptorProtoSchema, {
  name: 'telemetry/testing/v1/echo.proto',
  package: 'telemetry.testing.v1',
  syntax: 'proto3',
  messageType: [
    { name: 'EchoRequest', field: [textField] },
    { name: 'EchoResponse', field: [textField] },
  ],
  service: [
    {
      name: 'EchoService',
      method: [
        {
          name: 'Echo',
          inputType: '.telemetry.testing.v1.EchoRequest',
          outputType: '.telemetry.testing.v1.EchoResponse',
        },
        {
          name: 'EchoMany',
          inputType: '.telemetry.testing.v1.EchoRequest',
          outputType: '.telemetry.testing.v1.EchoResponse',
          serverStreaming: true,
        },
      ],
    },
  ],
});

export const file_telemetry_testing_v1_echo: GenFile = fileDesc(
  base64Encode(toBinary(FileDescriptorProtoSchema, echoProto)),
);

export type EchoRequest = Message<'telemetry.testing.v1.EchoRequest'> & { text: string };
export const EchoRequestSchema: GenMessage<EchoRequest> = messageDesc(
  file_telemetry_testing_v1_echo,
  0,
);

export type EchoResponse = Message<'telemetry.testing.v1.EchoResponse'> & { text: string };
export const EchoResponseSchema: GenMessage<EchoResponse> = messageDesc(
  file_telemetry_testing_v1_echo,
  1,
);

export const EchoService: GenService<{
  echo: { methodKind: 'unary'; input: typeof EchoRequestSchema; output: typeof EchoResponseSchema };
  echoMany: {
    methodKind: 'server_streaming';
    input: typeof EchoRequestSchema;
    output: typeof EchoResponseSchema;
  };
}> = serviceDesc(file_telemetry_testing_v1_echo, 0);
