// The UI's one way to write markup: htm's tagged templates over Preact,
// no build step. Every module imports html and the hooks from here.
import { h, render } from '../vendor/preact.mjs';
import htm from '../vendor/htm.mjs';

export { render };
export { useState, useEffect, useMemo, useRef, useCallback } from '../vendor/hooks.mjs';
export const html = htm.bind(h);
