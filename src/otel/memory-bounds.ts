/** How many closed units (and, in the builder, lookups) are remembered: the bound of every span-side memory map. */
export const MAX_REMEMBERED = 50_000;
