// One board per game, by the game's catalog name (GameHeader.game_type).
import "./boards.css";
import type { BoardModule } from "./types";
import { channeling } from "./channeling";
import { glow } from "./glow";
import { resarcana } from "./resarcana";
import { shen } from "./shen";
import { shrine } from "./shrine";

// Each module is typed on its own game's View and Move; the page hands each the
// messages of its own game only.
export const BOARDS: Record<string, BoardModule<any, any>> = { channeling, shrine, resarcana, glow, shen };
