// The board interface: what the page gives a game's board, and what the board gives back.
//
// A board is a pure function of the seat's view, the game's header and the legal moves
// with their labels (as chessground is of its state and config): it draws, and reports
// the move a person chose by its index in `moves`. It never decides what is legal, never
// calls the gateway, keeps no game state of its own between renders, and shows nothing
// but what `view` and `header` hold (a spectator's view already hides what a spectator
// may not see). The page (web/src/game.ts) owns the stream, the clocks, the history,
// resigning and errors, and lists every legal move beside the board as well.
import type { Message } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import type { ComponentType } from "preact";
import type { GameHeader } from "../gen/tabletop/common/v1/game_pb";

/** One legal move of the viewer's seat: ListMoves' `moves[index]` and `labels[index]`. */
export interface LegalMove<M extends Message = Message> {
  index: number;
  move: M;
  /** Its text form, as GetHistory shows it once played ("glyph star"). */
  label: string;
}

export interface BoardProps<V extends Message = Message, M extends Message = Message> {
  /** Seats (rulebook names, players, states, clocks), to_act, viewer (unset for a
   * spectator), status, outcome and options. */
  header: GameHeader;
  /** The viewer's view, exactly as the service sent it. */
  view: V;
  /** The viewer's legal moves now, in ListMoves' order; empty when the viewer has no
   * decision (another seat's turn, a spectator, the game over). */
  moves: readonly LegalMove<M>[];
  /** Choose `moves[index]`: the page submits it and shows a refusal's reason. */
  onMove: (index: number) => void;
  /** A move is on its way: ignore further choices until the next render. */
  busy: boolean;
}

/** What each web/src/boards/<game>.tsx exports, registered in web/src/boards/index.ts. */
export interface BoardModule<V extends Message = Message, M extends Message = Message> {
  /** The game's View message (tabletop.<game>.v1.View). */
  view: GenMessage<V>;
  Board: ComponentType<BoardProps<V, M>>;
}
