import type { BoardState, CardState } from './replay-board.js';

/**
 * Dependencies between cards: a card is ready only once every card it
 * depends on is verified, and the graph must stay acyclic (a cycle would
 * leave every card on it waiting forever).
 */

/**
 * A cycle in the graph, as the ids along it with the first repeated at the
 * end (c-1 → c-3 → c-1), or undefined when there is none. Iterative DFS: a
 * long chain of 1,000 cards must not overflow the stack.
 */
export function findCycle(dependsOn: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const WHITE = 0;
  const GREY = 1;
  const BLACK = 2;
  const color = new Map<string, number>();
  for (const start of dependsOn.keys()) {
    if ((color.get(start) ?? WHITE) !== WHITE) continue;
    const path: string[] = [];
    const stack: Array<{ id: string; next: number }> = [{ id: start, next: 0 }];
    color.set(start, GREY);
    path.push(start);
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const deps = dependsOn.get(top.id) ?? [];
      if (top.next < deps.length) {
        const dep = deps[top.next++]!;
        const c = color.get(dep) ?? WHITE;
        if (c === GREY) return [...path.slice(path.indexOf(dep)), dep];
        if (c === WHITE && dependsOn.has(dep)) {
          color.set(dep, GREY);
          path.push(dep);
          stack.push({ id: dep, next: 0 });
        }
      } else {
        color.set(top.id, BLACK);
        path.pop();
        stack.pop();
      }
    }
  }
  return undefined;
}

/** The board's dependency graph, with extra edges (new cards, rewired ones) laid over it. */
export function dependencyGraph(state: BoardState | undefined, overrides: ReadonlyMap<string, readonly string[]> = new Map()): Map<string, readonly string[]> {
  const graph = new Map<string, readonly string[]>();
  for (const id of state?.order ?? []) graph.set(id, state!.cards[id]!.dependsOn);
  for (const [id, deps] of overrides) graph.set(id, deps);
  return graph;
}

export function dependenciesVerified(state: BoardState, card: Pick<CardState, 'dependsOn'>): boolean {
  return card.dependsOn.every((id) => state.cards[id]?.status === 'verified');
}

/** Dependencies that can no longer be verified: cancelled ones. A card waiting on one waits forever. */
export function deadDependencies(state: BoardState, card: Pick<CardState, 'dependsOn'>): string[] {
  return card.dependsOn.filter((id) => state.cards[id]?.status === 'cancelled');
}

/** Cards that depend on `cardId`. */
export function dependentsOf(state: BoardState, cardId: string): CardState[] {
  return state.order.map((id) => state.cards[id]!).filter((c) => c.dependsOn.includes(cardId));
}
