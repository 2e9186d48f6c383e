"""gRPC server reflection, both ``grpc.reflection.v1`` and ``grpc.reflection.v1alpha``.

grpcio-reflection serves only v1alpha, and from the descriptors compiled into the
generated modules, which have lost the protos' comments. Tools that speak v1 (buf curl,
newer grpcurl, grpc-js reflection clients) and tools that show documentation (grpcurl
describe, grpcui, Postman) want more, so this serves both versions (their messages are
the same on the wire) from the descriptor set ``make protos`` writes next to the
generated code (``gen/tabletop.binpb``: protoc's ``--include_source_info`` keeps the
comments, and its descriptors carry each field's json_name). Files missing from it (the
health and reflection protos; everything, when the set was not built) come from the
generated modules instead.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection_pb2 as pb

V1 = "grpc.reflection.v1.ServerReflection"
V1ALPHA = "grpc.reflection.v1alpha.ServerReflection"
SERVICE_NAMES = (V1, V1ALPHA)
DESCRIPTOR_SET_NAME = "tabletop.binpb"

_NOT_FOUND = grpc.StatusCode.NOT_FOUND.value[0]
_INVALID = grpc.StatusCode.INVALID_ARGUMENT.value[0]


def descriptor_set_path() -> Path | None:
    """Where ``make protos`` put the descriptor set: beside the generated packages."""
    spec = importlib.util.find_spec("tabletop")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder).parent / DESCRIPTOR_SET_NAME
        if path.is_file():
            return path
    return None


def _v1_reflection_file() -> descriptor_pb2.FileDescriptorProto:
    """reflection.proto as v1: v1alpha's messages under the v1 package (the same schema)."""
    proto = descriptor_pb2.FileDescriptorProto.FromString(pb.DESCRIPTOR.serialized_pb)
    proto.name = "grpc/reflection/v1/reflection.proto"
    proto.package = "grpc.reflection.v1"
    proto.ClearField("options")
    old, new = ".grpc.reflection.v1alpha.", ".grpc.reflection.v1."
    for message in proto.message_type:
        for field in message.field:
            if field.type_name.startswith(old):
                field.type_name = new + field.type_name[len(old) :]
    for service in proto.service:
        for method in service.method:
            method.input_type = new + method.input_type[len(old) :]
            method.output_type = new + method.output_type[len(old) :]
    return proto


class Files:
    """File descriptors by file name and by the symbols they define."""

    def __init__(self, descriptor_set: Path | None) -> None:
        self.by_name: dict[str, descriptor_pb2.FileDescriptorProto] = {}
        self.raw: dict[str, bytes] = {}
        self.symbols: dict[str, str] = {}
        self.extensions: dict[tuple[str, int], str] = {}
        if descriptor_set is not None:
            found = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set.read_bytes())
            for proto in found.file:
                self._add(proto)
        self._add(_v1_reflection_file())

    def _add(self, proto: descriptor_pb2.FileDescriptorProto) -> None:
        if proto.name in self.by_name:
            return
        self.by_name[proto.name] = proto
        self.raw[proto.name] = proto.SerializeToString()
        prefix = f"{proto.package}." if proto.package else ""
        for message in proto.message_type:
            self._message(proto.name, prefix, message)
        for enum in proto.enum_type:
            self._enum(proto.name, prefix, enum)
        for service in proto.service:
            self.symbols[prefix + service.name] = proto.name
            for method in service.method:
                self.symbols[f"{prefix}{service.name}.{method.name}"] = proto.name
        for ext in proto.extension:
            self._extension(proto.name, prefix, ext)

    def _message(self, file: str, prefix: str, message: descriptor_pb2.DescriptorProto) -> None:
        name = prefix + message.name
        self.symbols[name] = file
        for field in message.field:
            self.symbols[f"{name}.{field.name}"] = file
        for nested in message.nested_type:
            self._message(file, f"{name}.", nested)
        for enum in message.enum_type:
            self._enum(file, f"{name}.", enum)
        for ext in message.extension:
            self._extension(file, f"{name}.", ext)

    def _enum(self, file: str, prefix: str, enum: descriptor_pb2.EnumDescriptorProto) -> None:
        self.symbols[prefix + enum.name] = file
        for value in enum.value:  # enum values live in the enum's enclosing scope
            self.symbols[prefix + value.name] = file

    def _extension(self, file: str, prefix: str, ext: descriptor_pb2.FieldDescriptorProto) -> None:
        self.symbols[prefix + ext.name] = file
        self.extensions[(ext.extendee.lstrip("."), ext.number)] = file

    def _from_pool(self, name: str | None = None, symbol: str | None = None) -> str | None:
        """Add a file (and its imports) the generated modules know; its name, or None."""
        pool = descriptor_pool.Default()
        try:
            if name is not None:
                found = pool.FindFileByName(name)
            elif symbol is not None:
                found = pool.FindFileContainingSymbol(symbol)
            else:
                return None
        except KeyError:
            return None
        todo = [found]
        while todo:
            file = todo.pop()
            if file.name not in self.by_name:
                self._add(descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb))
                todo.extend(file.dependencies)
        return found.name

    def file_named(self, name: str) -> str | None:
        return name if name in self.by_name else self._from_pool(name=name)

    def file_with_symbol(self, symbol: str) -> str | None:
        return self.symbols.get(symbol) or self._from_pool(symbol=symbol)

    def with_imports(self, name: str) -> list[bytes]:
        """The file first, then every file it imports, directly or not."""
        out: list[bytes] = []
        seen: set[str] = set()
        todo = [name]
        while todo:
            current = todo.pop(0)
            if current in seen or self.file_named(current) is None:
                continue
            seen.add(current)
            out.append(self.raw[current])
            todo.extend(self.by_name[current].dependency)
        return out


@functools.cache
def default_files() -> Files:
    """One index per process: every server in it serves the same files."""
    return Files(descriptor_set_path())


class Reflection:
    """Answers ServerReflectionInfo for the services named, in either version."""

    def __init__(self, service_names: Iterable[str], files: Files | None = None) -> None:
        self.service_names = tuple(dict.fromkeys([*service_names, *SERVICE_NAMES]))
        self.files = files or default_files()

    def answer(self, request: pb.ServerReflectionRequest) -> pb.ServerReflectionResponse:
        response = pb.ServerReflectionResponse(valid_host=request.host, original_request=request)
        kind = request.WhichOneof("message_request")
        if kind == "list_services":
            for service in self.service_names:
                response.list_services_response.service.add(name=service)
        elif kind in ("file_by_filename", "file_containing_symbol", "file_containing_extension"):
            if kind == "file_by_filename":
                name = self.files.file_named(request.file_by_filename)
            elif kind == "file_containing_symbol":
                name = self.files.file_with_symbol(request.file_containing_symbol)
            else:
                ext = request.file_containing_extension
                name = self.files.extensions.get((ext.containing_type, ext.extension_number))
            if name is None:
                return _error(response, _NOT_FOUND, f"not found: {getattr(request, kind)}".strip())
            response.file_descriptor_response.file_descriptor_proto.extend(
                self.files.with_imports(name)
            )
        elif kind == "all_extension_numbers_of_type":
            base = request.all_extension_numbers_of_type
            if self.files.file_with_symbol(base) is None:
                return _error(response, _NOT_FOUND, f"unknown type {base}")
            numbers = sorted(n for (t, n) in self.files.extensions if t == base)
            response.all_extension_numbers_response.base_type_name = base
            response.all_extension_numbers_response.extension_number.extend(numbers)
        else:
            return _error(response, _INVALID, "the request names nothing to look up")
        return response

    async def info(
        self, requests: AsyncIterator[pb.ServerReflectionRequest], context: Any
    ) -> AsyncIterator[pb.ServerReflectionResponse]:
        async for request in requests:
            yield self.answer(request)

    def handlers(self) -> Sequence[grpc.GenericRpcHandler]:
        def method() -> grpc.RpcMethodHandler[
            pb.ServerReflectionRequest, pb.ServerReflectionResponse
        ]:
            return grpc.stream_stream_rpc_method_handler(
                self.info,
                request_deserializer=pb.ServerReflectionRequest.FromString,
                response_serializer=pb.ServerReflectionResponse.SerializeToString,
            )

        return [
            grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": method()})
            for name in SERVICE_NAMES
        ]


def _error(
    response: pb.ServerReflectionResponse, code: int, message: str
) -> pb.ServerReflectionResponse:
    response.error_response.error_code = code
    response.error_response.error_message = message
    return response


def enable(server: grpc.aio.Server, service_names: Iterable[str]) -> Reflection:
    """Serve reflection v1 and v1alpha for ``service_names`` on ``server``."""
    reflection = Reflection(service_names)
    server.add_generic_rpc_handlers(reflection.handlers())
    return reflection
