export { type ConsoleSurfaceOptions, consoleSurface } from './surface.js';
