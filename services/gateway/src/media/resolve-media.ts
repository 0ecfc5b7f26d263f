/** The media resolution order lives in @vouch/contracts: the vision-router resolves with the same code. */
export { resolveMedia, type MediaResolution, type MediaResolutionInput } from '@vouch/contracts';
