"""Hypothesis strategies for hostile gRPC input: any protobuf message from its descriptor,
raw bytes that are almost (or not at all) a message, and call metadata.

``messages(descriptor)`` builds well-typed messages with random values in every field:
every scalar type over its whole range, enums including numbers the enum does not
define, any text and bytes, nested messages, one field (or none) of each oneof,
optional fields set or not, maps, and repeated fields that are usually short and
sometimes huge (tens of thousands of elements). Nothing in it knows a game: a new game's
protos are covered as they are.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

F = FieldDescriptor
MAX_DEPTH = 4  # nested messages deeper than this are left empty
HUGE_DEPTH = 1  # huge repeated fields and strings only this close to the top

INT_RANGES: dict[int, tuple[int, int]] = {
    F.TYPE_INT32: (-(2**31), 2**31 - 1),
    F.TYPE_SINT32: (-(2**31), 2**31 - 1),
    F.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    F.TYPE_INT64: (-(2**63), 2**63 - 1),
    F.TYPE_SINT64: (-(2**63), 2**63 - 1),
    F.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    F.TYPE_UINT32: (0, 2**32 - 1),
    F.TYPE_FIXED32: (0, 2**32 - 1),
    F.TYPE_UINT64: (0, 2**64 - 1),
    F.TYPE_FIXED64: (0, 2**64 - 1),
}


def integers(lo: int, hi: int) -> st.SearchStrategy[int]:
    """The whole range, with small numbers and the range's edges made likely."""
    edges = sorted({v for v in (lo, hi, lo + 1, hi - 1, 0, 1, -1, 2, 7, 100) if lo <= v <= hi})
    return st.one_of(
        st.sampled_from(edges),
        st.integers(max(lo, -10), min(hi, 1000)),
        st.integers(lo, hi),
    )


def _huge(element: st.SearchStrategy[Any], most: int) -> st.SearchStrategy[list[Any]]:
    """A long list quickly: a few drawn elements repeated up to ``most`` times over."""
    return st.tuples(st.lists(element, min_size=1, max_size=3), st.integers(1_000, most)).map(
        lambda pair: (pair[0] * (pair[1] // len(pair[0]) + 1))[: pair[1]]
    )


def text(depth: int) -> st.SearchStrategy[str]:
    small = st.text(max_size=40)
    if depth > HUGE_DEPTH:
        return small
    long = st.tuples(st.text(min_size=1, max_size=4), st.integers(200, 300_000)).map(
        lambda pair: pair[0] * pair[1]
    )
    return st.one_of(small, long, small)  # hypothesis favours the ends


def binary(depth: int) -> st.SearchStrategy[bytes]:
    small = st.binary(max_size=40)
    if depth > HUGE_DEPTH:
        return small
    long = st.tuples(st.binary(min_size=1, max_size=4), st.integers(200, 300_000)).map(
        lambda pair: pair[0] * pair[1]
    )
    return st.one_of(small, long, small)  # hypothesis favours the ends


def enum_values(field: FieldDescriptor) -> st.SearchStrategy[int]:
    known = [v.number for v in field.enum_type.values]
    if getattr(field.enum_type, "is_closed", False):
        return st.sampled_from(known)  # a closed enum cannot hold other numbers
    return st.one_of(st.sampled_from(known), integers(-(2**31), 2**31 - 1))


def scalar(field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind in INT_RANGES:
        return integers(*INT_RANGES[kind])
    if kind == F.TYPE_BOOL:
        return st.booleans()
    if kind == F.TYPE_FLOAT:
        return st.floats(width=32)
    if kind == F.TYPE_DOUBLE:
        return st.floats()
    if kind == F.TYPE_STRING:
        return text(depth)
    if kind == F.TYPE_BYTES:
        return binary(depth)
    if kind == F.TYPE_ENUM:
        return enum_values(field)
    raise TypeError(f"no strategy for field {field.full_name} of type {kind}")


def _is_map(field: FieldDescriptor) -> bool:
    return (
        field.type == F.TYPE_MESSAGE
        and field.is_repeated
        and field.message_type.GetOptions().map_entry
    )


def _real_oneofs(descriptor: Descriptor) -> list[Any]:
    """Oneofs as written in the proto (not the synthetic ones of proto3 ``optional``)."""
    return [
        o
        for o in descriptor.oneofs
        if not (len(o.fields) == 1 and o.name == f"_{o.fields[0].name}")
    ]


class _Builder:
    def __init__(self) -> None:
        self._cache: dict[tuple[str, int], st.SearchStrategy[Message]] = {}

    def value(self, field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
        """A strategy for one value of ``field`` (one element, when it is repeated)."""
        if field.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
            if field.is_repeated:  # no huge lists inside a list that may be huge itself
                return self.message(field.message_type, max(depth, HUGE_DEPTH) + 1)
            return self.message(field.message_type, depth + 1)
        # The elements of a repeated field stay small: the list is what may be huge.
        return scalar(field, HUGE_DEPTH + 1 if field.is_repeated else depth)

    def field(self, field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
        if _is_map(field):
            entry = field.message_type
            keys = scalar(entry.fields_by_name["key"], HUGE_DEPTH + 1)
            values = self.value(entry.fields_by_name["value"], max(depth, HUGE_DEPTH + 1))
            return st.dictionaries(keys, values, max_size=4)
        element = self.value(field, depth)
        if not field.is_repeated:
            return element
        small = st.lists(element, max_size=4)
        if depth > HUGE_DEPTH:
            return small
        most = 20_000 if field.type == F.TYPE_MESSAGE else 200_000
        return st.one_of(small, _huge(element, most), small)

    def message(self, descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Message]:
        key = (descriptor.full_name, depth)
        if key in self._cache:
            return self._cache[key]
        cls = message_factory.GetMessageClass(descriptor)
        if depth > MAX_DEPTH:
            strategy: st.SearchStrategy[Message] = st.builds(cls)
            self._cache[key] = strategy
            return strategy
        oneofs = _real_oneofs(descriptor)
        in_oneof = {f.name for o in oneofs for f in o.fields}
        plain = [f for f in descriptor.fields if f.name not in in_oneof]
        values = {f.name: self.field(f, depth) for f in descriptor.fields}

        @st.composite
        def build(draw: st.DrawFn) -> Message:
            msg = cls()
            for field in plain:
                optional = field.has_presence or field.type == F.TYPE_MESSAGE
                if optional and not draw(st.booleans()):
                    continue  # an optional field, or a message field, left unset
                assign(msg, field, draw(values[field.name]))
            for oneof in oneofs:
                kinds = st.sampled_from(list(oneof.fields))
                chosen = draw(st.one_of(kinds, st.none(), kinds))
                if chosen is not None:
                    assign(msg, chosen, draw(values[chosen.name]))
            return msg

        strategy = build()
        self._cache[key] = strategy
        return strategy


def assign(msg: Message, field: FieldDescriptor, value: Any) -> None:
    """Set ``field`` of ``msg`` to a value drawn by the strategies above."""
    name = field.name
    if _is_map(field):
        target = getattr(msg, name)
        for key, item in value.items():
            if isinstance(item, Message):
                target[key].CopyFrom(item)
            else:
                target[key] = item
    elif field.is_repeated:
        getattr(msg, name).extend(value)
    elif isinstance(value, Message):
        getattr(msg, name).CopyFrom(value)
        getattr(msg, name).SetInParent()
    else:
        setattr(msg, name, value)


_BUILDER = _Builder()


def messages(descriptor: Descriptor) -> st.SearchStrategy[Message]:
    """Any message of this type, with random values in every field."""
    return _BUILDER.message(descriptor)


# --- near misses -------------------------------------------------------------------------


def _leaves(msg: Message) -> list[tuple[Message, FieldDescriptor]]:
    """Every set field of ``msg`` and of the messages in it, depth first."""
    found: list[tuple[Message, FieldDescriptor]] = []
    for field, value in msg.ListFields():
        found.append((msg, field))
        if field.type == F.TYPE_MESSAGE and not _is_map(field):
            for child in value if field.is_repeated else [value]:
                found.extend(_leaves(child))
    return found


def strings_in(msgs: list[Message]) -> list[str]:
    """Every string value in these messages (a near miss borrows one)."""
    out: set[str] = set()
    for msg in msgs:
        for parent, field in _leaves(msg):
            if field.type == F.TYPE_STRING:
                value = getattr(parent, field.name)
                out.update(value if field.is_repeated else [value])
    return sorted(out)


def near_miss(msg: Message, picks: list[int], donors: list[str]) -> Message:
    """A copy of ``msg`` with one value changed a little: a number off by a few, a string
    swapped for one from another move or cut short, an element dropped or repeated, an
    enum one past its end. ``picks`` (drawn numbers) choose what and how."""
    out = type(msg)()
    out.CopyFrom(msg)
    leaves = [(p, f) for p, f in _leaves(out) if f.type != F.TYPE_MESSAGE or f.is_repeated]
    if not leaves:
        return out
    picks = [*picks, 0, 0, 0]
    parent, field = leaves[picks[0] % len(leaves)]
    how = picks[1]
    if field.is_repeated:
        items = getattr(parent, field.name)
        if how % 3 == 0 and len(items):
            del items[picks[2] % len(items)]
        elif how % 3 == 1 and len(items):
            items.append(items[picks[2] % len(items)])
        elif field.type == F.TYPE_STRING and donors:
            items.append(donors[picks[2] % len(donors)])
        return out
    value = getattr(parent, field.name)
    if field.type in INT_RANGES or field.type == F.TYPE_ENUM:
        lo, hi = INT_RANGES.get(field.type, (-(2**31), 2**31 - 1))
        changed = value + (-3, -2, -1, 1, 2, 3, 100)[how % 7]
        if field.type == F.TYPE_ENUM and getattr(field.enum_type, "is_closed", False):
            return out
        setattr(parent, field.name, min(hi, max(lo, changed)))
    elif field.type == F.TYPE_BOOL:
        setattr(parent, field.name, not value)
    elif field.type == F.TYPE_STRING:
        options = [value[:-1], value + value[-1:], value.upper(), "", *donors]
        setattr(parent, field.name, options[how % len(options)])
    elif field.type == F.TYPE_BYTES:
        setattr(parent, field.name, value[:-1])
    return out


# --- raw bytes ----------------------------------------------------------------------------


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def length_delimited(number: int, payload: bytes) -> bytes:
    """One field on the wire: tag with wire type 2, length, bytes."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _mutate(data: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    out = bytearray(data)
    for kind, where, value in edits:
        if not out:
            out.append(value)
            continue
        at = where % len(out)
        if kind == 0:
            out[at] = value
        elif kind == 1:
            out.insert(at, value)
        else:
            del out[at]
    return bytes(out)


def raw_bytes(valid: st.SearchStrategy[Message]) -> st.SearchStrategy[bytes]:
    """Bytes that are not quite a request: random, truncated, mutated, hostile on the wire."""
    serialized = valid.map(lambda m: m.SerializeToString())
    edit = st.tuples(st.integers(0, 2), st.integers(0, 2**32), st.integers(0, 255))
    return st.one_of(
        st.binary(max_size=2048),
        st.tuples(serialized, st.integers(0, 2**32)).map(
            lambda pair: pair[0][: pair[1] % (len(pair[0]) + 1)]  # truncated
        ),
        st.tuples(serialized, st.lists(edit, min_size=1, max_size=6)).map(
            lambda pair: _mutate(*pair)
        ),
        # Deeply nested groups under a field number no message uses.
        st.integers(1, 100_000).map(lambda n: b"\xfb\x3e" * n + b"\xfc\x3e" * n),
        # A length that runs past the end, and one that is absurdly large.
        st.integers(1, 2**63).map(lambda n: b"\x0a" + varint(n) + b"x"),
        # A varint that never ends; a string field carrying bytes that are not UTF-8.
        st.integers(1, 64).map(lambda n: b"\x08" + b"\xff" * n),
        st.binary(min_size=1, max_size=64).map(lambda b: length_delimited(1, b"\xc3\x28" + b)),
        # Every wire type (including the deprecated and the invalid ones) on field 1.
        st.tuples(st.integers(0, 7), st.binary(max_size=16)).map(
            lambda pair: bytes([1 << 3 | pair[0]]) + pair[1]
        ),
    )


# --- call metadata ------------------------------------------------------------------------

PRINTABLE = "".join(chr(c) for c in range(0x20, 0x7F))  # all gRPC lets a client send
TOKEN_CHARS = string.ascii_letters + string.digits + "-_"
HEADER_KEY_CHARS = string.ascii_lowercase + string.digits + "-_."
RESERVED_KEYS = frozenset({"content-type", "te", "host", "user-agent", "connection"})


@dataclass(frozen=True)
class Token:
    """A seat token, chosen when the call is made (strategies may not look at live games):
    ``own`` are the aimed-at game's tokens, ``replayed`` another game's."""

    source: str  # "own" or "replayed"
    index: int
    alter: str = "as_is"  # or "flip" (one character off), "prefix", "twice"
    arg: int = 0

    def resolve(self, own: list[str], replayed: list[str]) -> str:
        tokens = own if self.source == "own" else replayed
        if not tokens:
            return "Bearer none"
        token = tokens[self.index % len(tokens)]
        if self.alter == "flip":
            at = self.arg % len(token)
            token = token[:at] + ("A" if token[at] != "A" else "B") + token[at + 1 :]
        elif self.alter == "prefix":
            token = token[: 1 + self.arg % (len(token) - 1)]
        elif self.alter == "twice":
            token = f"{token} {token}"
        return f"Bearer {token}"


Metadata = tuple[tuple[str, Any], ...]


def resolve(metadata: Metadata, own: list[str], replayed: list[str]) -> Metadata:
    return tuple((k, v.resolve(own, replayed) if isinstance(v, Token) else v) for k, v in metadata)


def auth_values() -> st.SearchStrategy[str | Token]:
    """Authorization header values: the game's own seat tokens, another game's tokens
    (replayed), forged ones, near misses, other schemes and plain garbage."""
    bearer = "Bearer {}".format
    index = st.integers(0, 2**16)
    alter = st.sampled_from(["flip", "prefix", "twice"])
    schemes = st.sampled_from(["bearer ", "BEARER ", "Bearer  ", " Bearer "])
    return st.one_of(
        st.builds(Token, st.just("own"), index),
        st.builds(Token, st.just("own"), index),
        st.builds(Token, st.just("replayed"), index),
        st.builds(Token, st.just("own"), index, alter, index),  # near misses
        st.text(TOKEN_CHARS, min_size=1, max_size=64).map(bearer),  # forged
        st.text(TOKEN_CHARS, min_size=257, max_size=4000).map(bearer),  # too long
        st.text(PRINTABLE, max_size=300),  # garbage
        st.sampled_from(["", "Bearer", "Bearer ", "bearer", "Basic dXNlcjpwYXNz", "Token x"]),
        st.tuples(schemes, st.text(TOKEN_CHARS, max_size=50)).map("".join),
    )


def metadata() -> st.SearchStrategy[Metadata]:
    """Whole metadata tuples: none, one authorization header, several, binary ones, and
    extra headers of any (legal) name. Kept well under gRPC's own header size limit."""
    value = auth_values()
    key = st.text(HEADER_KEY_CHARS, min_size=1, max_size=20).filter(
        lambda k: not k.startswith("grpc-") and not k.endswith("-bin") and k not in RESERVED_KEYS
    )
    extra = st.tuples(key, st.text(PRINTABLE, max_size=100))
    one = value.map(lambda v: (("authorization", v),))
    several = st.lists(value, min_size=2, max_size=3).map(
        lambda vs: tuple(("authorization", v) for v in vs)
    )
    binary = st.binary(max_size=64).map(lambda b: (("authorization-bin", b),))
    with_extras = st.tuples(st.one_of(st.just(()), one), st.lists(extra, max_size=3)).map(
        lambda pair: (*pair[0], *pair[1])
    )
    own = st.builds(Token, st.just("own"), st.integers(0, 2**16)).map(
        lambda v: (("authorization", v),)
    )
    # Hypothesis favours the first and last choices: a seat's own token, the usual case.
    return st.one_of(own, st.just(()), one, several, binary, with_extras, own)
