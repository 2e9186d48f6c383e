// The gateway, from the browser: gRPC-Web through connect-web, the generated services,
// and a refusal's reason. Everything else is the generated clients' own.
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type CallOptions, type Client, type Transport } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { ErrorInfoSchema, type ErrorInfo } from "./gen/google/rpc/error_details_pb";
import { CatalogService } from "./gen/tabletop/gateway/v1/catalog_pb";
import type { ChannelingService } from "./gen/tabletop/channeling/v1/channeling_pb";

export { Code, ConnectError };

/** Where the gateway is: config.json beside the page (the static server writes it), else
 * this page's host on the gateway's default port. */
export interface WebConfig {
  gateway?: string;
  gatewayPort?: number;
}

export async function gatewayUrl(): Promise<string> {
  let config: WebConfig = {};
  try {
    const reply = await fetch("config.json", { cache: "no-store" });
    if (reply.ok) config = (await reply.json()) as WebConfig;
  } catch {
    // No config.json: the defaults below.
  }
  if (config.gateway) return config.gateway.replace(/\/$/, "");
  return `${location.protocol}//${location.hostname}:${config.gatewayPort ?? 50051}`;
}

export function transport(baseUrl: string): Transport {
  return createGrpcWebTransport({ baseUrl, useBinaryFormat: true });
}

export function catalog(t: Transport): Client<typeof CatalogService> {
  return createClient(CatalogService, t);
}

/** Every game service has the same ten calls; their messages differ only in the game's
 * own types (Options, Move, View). One game's client type stands for all five. */
export type GameClient = Client<typeof ChannelingService>;

export function gameClient(service: DescService, t: Transport): GameClient {
  return createClient(service, t) as unknown as GameClient;
}

/** The call options that act as a seat: its token as a bearer credential. */
export function asSeat(token: string | undefined, extra: CallOptions = {}): CallOptions {
  return token ? { ...extra, headers: { authorization: `Bearer ${token}` } } : extra;
}

/** A refusal as the service gave it: the canonical code, its ErrorInfo (domain
 * "tabletop", reason such as ILLEGAL_MOVE, metadata such as "rule"), and the message. */
export interface Refusal {
  code: Code;
  reason: string;
  metadata: Record<string, string>;
  message: string;
}

export function errorInfo(error: unknown): ErrorInfo | undefined {
  return ConnectError.from(error).findDetails(ErrorInfoSchema)[0];
}

export function refusal(error: unknown): Refusal {
  const e = ConnectError.from(error);
  const info = errorInfo(e);
  return {
    code: e.code,
    reason: info?.reason ?? "",
    metadata: info?.metadata ?? {},
    message: e.rawMessage,
  };
}

/** Codes that say "try again": the gateway or a service is away or busy for now. */
export function retryable(error: unknown): boolean {
  const code = ConnectError.from(error).code;
  return [Code.Unavailable, Code.Unknown, Code.Internal, Code.DeadlineExceeded, Code.ResourceExhausted, Code.Aborted, Code.Canceled].includes(code);
}

/** A refusal in words for people: the service's own message, its reason and rule. */
export function describe(error: unknown): string {
  const r = refusal(error);
  if (r.code === Code.Unavailable && !r.reason) {
    return "The gateway cannot be reached (it may be stopped or restarting).";
  }
  const rule = r.metadata["rule"] ? ` (rule: ${r.metadata["rule"]})` : "";
  const reason = r.reason ? ` [${r.reason}]` : ` [${Code[r.code]}]`;
  return `${r.message || Code[r.code]}${rule}${reason}`;
}
