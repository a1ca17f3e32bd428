"""What grpcurl does, with Python's grpcio-reflection: discover the API through server reflection
(grpcio-reflection speaks only `grpc.reflection.v1alpha`), then call Decide from JSON with the
discovered types alone, no generated stubs."""

from google.protobuf import descriptor_pool, json_format, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
import grpc


def test_a_reflection_client_discovers_the_api_and_decides_from_json(server):
    with grpc.insecure_channel(server.target) as channel:
        database = ProtoReflectionDescriptorDatabase(channel)
        services = database.get_services()
        assert "toolgate.v1.Gate" in services, services
        assert "grpc.health.v1.Health" in services, services

        pool = descriptor_pool.DescriptorPool(database)
        method = pool.FindServiceByName("toolgate.v1.Gate").FindMethodByName("Decide")
        request_type = message_factory.GetMessageClass(method.input_type)
        response_type = message_factory.GetMessageClass(method.output_type)
        request = json_format.Parse(
            '{"session_id":"s1","actor":{"id":"alice"},"tool":"write","args_json":"{\\"path\\":\\"a.txt\\"}"}',
            request_type(),
        )
        decide = channel.unary_unary(
            "/toolgate.v1.Gate/Decide",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response_type.FromString,
        )
        answer = json_format.MessageToDict(decide(request, timeout=10))

    assert answer["outcome"] == "DENY", answer
    assert answer["reason"] == "tool requires allow_write=true: write", answer
    assert int(answer["seq"]) > 0
