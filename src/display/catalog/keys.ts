/** The message keys (those of the English catalog) and the shape every language must fill. */
import type { en } from './en.js';

export type MessageKey = keyof typeof en;
export type Messages = { readonly [K in MessageKey]: string };
