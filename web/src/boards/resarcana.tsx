// Resarcana's board. For now the generic board (the view's fields as HTML) with the move
// list beside it; the board drawn as SVG replaces this module's Board, on the same props.
import { ViewSchema, type Move, type View } from "../gen/tabletop/resarcana/v1/resarcana_pb";
import { GenericBoard } from "./generic";
import type { BoardModule, BoardProps } from "./types";

function ResarcanaBoard(props: BoardProps<View, Move>) {
  return <GenericBoard schema={ViewSchema} view={props.view} header={props.header} />;
}

export const resarcana: BoardModule<View, Move> = { view: ViewSchema, Board: ResarcanaBoard };
