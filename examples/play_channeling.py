"""A third-party client with nothing but the protos: play The Channeling to its end.

    pip install grpcio-tools==1.85.1
    mkdir -p build/python
    python -m grpc_tools.protoc -I protos --python_out=build/python --grpc_python_out=build/python \
        $(find protos -name '*.proto')
    PYTHONPATH=build/python python examples/play_channeling.py 127.0.0.1:50051

Both seats play random legal moves through the gateway; the outcome is printed.
"""

import random
import sys

import grpc
from tabletop.channeling.v1 import channeling_pb2 as pb
from tabletop.channeling.v1 import channeling_pb2_grpc as pb_grpc

FINISHED = 2


def main(target: str) -> None:
    with grpc.insecure_channel(target) as channel:
        stub = pb_grpc.ChannelingServiceStub(channel)
        created = stub.CreateGame(pb.CreateGameRequest(players=2))
        game_id = created.game.game_id
        tokens = {t.seat: t.token for t in created.seat_tokens}
        print(f"game {game_id}")
        rng = random.Random()
        while True:
            state = stub.GetGame(pb.GetGameRequest(game_id=game_id))
            if state.game.status == FINISHED:
                break
            seat = state.game.to_act[0]
            auth = [("authorization", f"Bearer {tokens[seat]}")]
            listed = stub.ListMoves(pb.ListMovesRequest(game_id=game_id), metadata=auth)
            reply = stub.SubmitMove(
                pb.SubmitMoveRequest(
                    game_id=game_id,
                    move=rng.choice(listed.moves),
                    expected_version=listed.game.version,
                    request_id=f"{seat}-{listed.game.version}",
                ),
                metadata=auth,
            )
            print(f"v{reply.turn.version} {state.game.seats[seat].name}: {reply.turn.move_text}")
        outcome = state.game.outcome
        print(f"{outcome.reason}: scores {list(outcome.scores)}, winners {list(outcome.winners)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051")
