// The seats this browser holds: each seat's token in localStorage, per game id, so a
// reload or a later visit keeps the seat. A token is a secret: it stays in this browser
// and goes only to the gateway, in the authorization header.
export interface HeldSeat {
  game: string;
  gameId: string;
  seat: number;
  seatName: string;
  token: string;
  savedAt: number;
}

const PREFIX = "tabletop.seats.";
const NAME = "tabletop.name";

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null; // storage refused (a private window's policy): nothing kept
  }
}

function write(key: string, value: string | null): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // storage full or refused: the seat lasts as long as the page
  }
}

export function seatsOf(gameId: string): HeldSeat[] {
  const text = read(PREFIX + gameId);
  if (!text) return [];
  try {
    const seats = JSON.parse(text) as HeldSeat[];
    return Array.isArray(seats) ? seats.filter((s) => typeof s.token === "string" && Number.isInteger(s.seat)) : [];
  } catch {
    return [];
  }
}

export function keepSeats(seats: HeldSeat[]): void {
  if (seats.length === 0) return;
  const gameId = seats[0]!.gameId;
  const others = seatsOf(gameId).filter((s) => !seats.some((n) => n.seat === s.seat));
  write(PREFIX + gameId, JSON.stringify([...others, ...seats].sort((a, b) => a.seat - b.seat)));
}

export function forgetSeat(gameId: string, seat?: number): void {
  const left = seat === undefined ? [] : seatsOf(gameId).filter((s) => s.seat !== seat);
  write(PREFIX + gameId, left.length ? JSON.stringify(left) : null);
}

/** Every game this browser holds a seat in, newest first. */
export function heldGames(): HeldSeat[][] {
  const games: HeldSeat[][] = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (key?.startsWith(PREFIX)) {
        const seats = seatsOf(key.slice(PREFIX.length));
        if (seats.length) games.push(seats);
      }
    }
  } catch {
    return [];
  }
  return games.sort((a, b) => Math.max(...b.map((s) => s.savedAt)) - Math.max(...a.map((s) => s.savedAt)));
}

export function playerName(): string {
  return read(NAME) ?? "";
}

export function setPlayerName(name: string): void {
  write(NAME, name.trim() || null);
}
