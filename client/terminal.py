"""The terminal of ``play --interactive``: a screen the game redraws, and input read
without blocking the event loop that follows the game.

Two kinds, chosen by :func:`open_io`:

- :class:`Terminal`, when stdin and stdout are both a terminal: keys are read one at a
  time (cbreak mode) as the event loop sees them, and the line being typed is drawn by
  us on a live status line that also carries the countdown. So the game can redraw the
  screen under it: what was typed for a listing that is gone is cleared with it, and an
  answer is tagged with the screen it was typed on.
- :class:`Lines`, for a pipe or a file: one line is taken per prompt, and only when the
  prompt is on screen, so a line answers the prompt printed just before it. Output is
  appended, never redrawn (a transcript).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import sys
import termios
import tty
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol, TextIO

LineHandler = Callable[[str], None]
EofHandler = Callable[[], None]


class Io(Protocol):
    """What the session draws on and reads from (Terminal and Lines are the two)."""

    live: bool  # a live status line (a terminal), or a transcript

    def start(self, on_line: LineHandler, on_eof: EofHandler) -> None: ...
    def stop(self) -> None: ...
    def frame(self, lines: list[str]) -> None: ...
    def say(self, lines: list[str]) -> None: ...
    def status(self, text: str) -> None: ...
    def ask(self, text: str) -> None: ...
    def invalidate(self) -> bool: ...
    def unread(self, line: str) -> None: ...


CLEAR_SCREEN = "\033[H\033[2J"
CLEAR_LINE = "\r\033[K"
ENTER = ("\r", "\n")
BACKSPACE = ("\x7f", "\x08")
CTRL_D = "\x04"
CTRL_U = "\x15"
CTRL_W = "\x17"
ESCAPE = "\x1b"


class Terminal:
    """Keys one at a time and a live status line, at a terminal.

    ``on_line`` gets each line entered (Enter), ``on_eof`` Ctrl-D on an empty line; both
    are called from the event loop, in the order the keys came.
    """

    live = True

    def __init__(self, fd: int = 0, out: TextIO | None = None) -> None:
        self._fd = fd
        self._out = out or sys.stdout
        self._saved: list[Any] | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._typed = ""
        self._escape = ""  # an escape sequence being skipped (arrow keys and the like)
        self._status = ""
        self._prompt = False
        self._on_line: LineHandler = lambda line: None
        self._on_eof: EofHandler = lambda: None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, on_line: LineHandler, on_eof: EofHandler) -> None:
        self._on_line, self._on_eof = on_line, on_eof
        self._saved = termios.tcgetattr(self._fd)
        tty.setcbreak(self._fd)  # no echo, no line editing: we draw what is typed
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._fd, self._readable)

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self._fd)
            self._loop = None
        self._write(CLEAR_LINE + self._status.rstrip() + "\n" if self._status else "")
        self._status = ""
        if self._saved is not None:
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)
            self._saved = None

    # --- the screen ---------------------------------------------------------------------

    def frame(self, lines: list[str]) -> None:
        """A new screen: everything before is cleared, the status line stays last."""
        self._write(CLEAR_SCREEN + "".join(f"{line}\n" for line in lines) + self._live_line())

    def say(self, lines: list[str]) -> None:
        """Lines above the status line, which is drawn again below them."""
        self._write(CLEAR_LINE + "".join(f"{line}\n" for line in lines) + self._live_line())

    def status(self, text: str) -> None:
        """The live line, not asking for anything (typing still shows after it)."""
        self._show(text, prompt=False)

    def ask(self, text: str) -> None:
        """The live line as a prompt: what is typed is its answer."""
        self._show(text, prompt=True)

    def invalidate(self) -> bool:
        """The screen the user was answering is gone: clear what they typed for it (True
        if there was something) and stop asking."""
        cleared = bool(self._typed.strip())
        self._typed = ""
        self._prompt = False
        self._write(self._live_line())
        return cleared

    def unread(self, line: str) -> None:
        """Lines typed at a terminal answer the screen they were typed on: none goes back."""

    def _show(self, text: str, prompt: bool) -> None:
        if text != self._status or prompt != self._prompt:
            self._status, self._prompt = text, prompt
            self._write(self._live_line())

    def _live_line(self) -> str:
        return CLEAR_LINE + self._status + self._typed

    def _write(self, text: str) -> None:
        if text:
            self._out.write(text)
            self._out.flush()

    # --- keys ---------------------------------------------------------------------------

    def _readable(self) -> None:
        try:
            data = os.read(self._fd, 1024)
        except OSError:
            data = b""
        if not data:  # the terminal went away
            self._on_eof()
            return
        for key in self._decoder.decode(data):
            self._key(key)
        self._write(self._live_line())

    def _key(self, key: str) -> None:
        if self._escape:  # skipped whole: ESC [ ... final byte, ESC O x, or ESC x
            self._escape += key
            if len(self._escape) == 2:
                if key not in "[O":
                    self._escape = ""
            elif self._escape[1] == "O" or "@" <= key <= "~":
                self._escape = ""
            return
        if key == ESCAPE:
            self._escape = key
        elif key in ENTER:
            line, self._typed = self._typed, ""
            self._on_line(line)
        elif key in BACKSPACE:
            self._typed = self._typed[:-1]
        elif key == CTRL_U:
            self._typed = ""
        elif key == CTRL_W:
            self._typed = self._typed.rstrip()
            self._typed = self._typed[: self._typed.rfind(" ") + 1]
        elif key == CTRL_D:
            if not self._typed:
                self._on_eof()
        elif key.isprintable():
            self._typed += key


class Lines:
    """Lines from a pipe or a file, one per prompt, read only when a prompt asks.

    Reading waits for the event loop to see data (a pipe), so the game goes on being
    followed meanwhile; nothing is read ahead beyond one chunk, so an endless producer
    (``yes 0 |``) costs nothing. A file, which never blocks, is read as it is.
    """

    live = False

    def __init__(self, fd: int = 0, out: TextIO | None = None) -> None:
        self._fd = fd
        self._out = out or sys.stdout
        self._buffer = b""
        self._lines: deque[str] = deque()
        self._eof = False
        self._wanted = False
        self._watching = False
        self._on_line: LineHandler = lambda line: None
        self._on_eof: EofHandler = lambda: None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, on_line: LineHandler, on_eof: EofHandler) -> None:
        self._on_line, self._on_eof = on_line, on_eof
        self._loop = asyncio.get_running_loop()

    def stop(self) -> None:
        self._unwatch()
        self._loop = None

    def frame(self, lines: list[str]) -> None:
        self.say(lines)

    def say(self, lines: list[str]) -> None:
        self._out.write("".join(f"{line}\n" for line in lines))
        self._out.flush()

    def status(self, text: str) -> None:
        """No live line in a transcript: what it would say is said by the caller."""

    def ask(self, text: str) -> None:
        """Print the prompt (the answer, echoed by the caller, ends its line) and take
        the next line for it."""
        self._out.write(text)
        self._out.flush()
        self._wanted = True
        self._deliver()

    def invalidate(self) -> bool:
        self._wanted = False
        return False

    def unread(self, line: str) -> None:
        """A line that came when no prompt was up waits for the next one."""
        self._lines.appendleft(line)

    def _deliver(self) -> None:
        if not self._wanted or self._loop is None:
            return
        if self._lines:
            self._wanted = False
            self._loop.call_soon(self._on_line, self._lines.popleft())
        elif self._eof:
            self._wanted = False
            self._loop.call_soon(self._on_eof)
        elif not self._watching:
            try:
                self._loop.add_reader(self._fd, self._readable)
                self._watching = True
            except PermissionError:  # a regular file: epoll refuses it, and it never blocks
                self._readable()

    def _unwatch(self) -> None:
        if self._watching and self._loop is not None:
            self._loop.remove_reader(self._fd)
        self._watching = False

    def _readable(self) -> None:
        try:
            chunk = os.read(self._fd, 65536)
        except OSError:
            chunk = b""
        if chunk:
            self._buffer += chunk
            *complete, self._buffer = self._buffer.split(b"\n")
            self._lines.extend(line.decode(errors="replace").rstrip("\r") for line in complete)
        else:
            self._eof = True
            if self._buffer:  # a last line without its newline
                self._lines.append(self._buffer.decode(errors="replace").rstrip("\r"))
                self._buffer = b""
        if self._lines or self._eof:
            self._unwatch()
        self._deliver()


def open_io() -> Io:
    """A Terminal when both ends are one, else Lines."""
    with contextlib.suppress(OSError, ValueError):
        if sys.stdin.isatty() and sys.stdout.isatty():
            return Terminal(sys.stdin.fileno())
    return Lines(sys.stdin.fileno())
