// The five games the web app knows: each one's generated service and messages, and its
// board. The catalog (the gateway's CatalogService) says which of them are routed and up.
import type { DescMessage, DescService } from "@bufbuild/protobuf";
import { BOARDS } from "./boards";
import type { BoardModule } from "./boards/types";
import * as channeling from "./gen/tabletop/channeling/v1/channeling_pb";
import * as glow from "./gen/tabletop/glow/v1/glow_pb";
import * as resarcana from "./gen/tabletop/resarcana/v1/resarcana_pb";
import * as shen from "./gen/tabletop/shen/v1/shen_pb";
import * as shrine from "./gen/tabletop/shrine/v1/shrine_pb";

export interface GameDef {
  name: string;
  service: DescService;
  options: DescMessage;
  move: DescMessage;
  board: BoardModule;
}

export const GAMES: Record<string, GameDef> = {
  channeling: { name: "channeling", service: channeling.ChannelingService, options: channeling.OptionsSchema, move: channeling.MoveSchema, board: BOARDS["channeling"]! },
  shrine: { name: "shrine", service: shrine.ShrineService, options: shrine.OptionsSchema, move: shrine.MoveSchema, board: BOARDS["shrine"]! },
  resarcana: { name: "resarcana", service: resarcana.ResarcanaService, options: resarcana.OptionsSchema, move: resarcana.MoveSchema, board: BOARDS["resarcana"]! },
  glow: { name: "glow", service: glow.GlowService, options: glow.OptionsSchema, move: glow.MoveSchema, board: BOARDS["glow"]! },
  shen: { name: "shen", service: shen.ShenService, options: shen.OptionsSchema, move: shen.MoveSchema, board: BOARDS["shen"]! },
};
