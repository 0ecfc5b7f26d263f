import { parse as parseContentType } from 'content-type';
import type { RequestHandler } from 'express';
import { ERROR_CODES, VouchError } from '@vouch/contracts';

/** The media types the gateway's JSON body parser reads. */
export const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * Runs before the JSON body parser of operation routes. JSON is UTF-8 (RFC
 * 8259 8.1): a body declared in another charset is refused with 415 naming
 * UTF-8 before it is read. body-parser alone accepts any `utf-*` charset and
 * decodes UTF-8 bytes labelled UTF-16 into text that then fails to parse, a
 * misleading 400 "malformed JSON".
 */
export const requireUtf8Json: RequestHandler = (req, _res, next) => {
  if (!req.is(JSON_TYPES)) return next();
  let charset: string | undefined;
  try {
    charset = parseContentType(req.get('content-type') ?? '').parameters.charset?.toLowerCase();
  } catch {
    return next(new VouchError(ERROR_CODES.unsupportedMediaType, 'the Content-Type header cannot be parsed: send Content-Type: application/json; charset=utf-8'));
  }
  if (charset !== undefined && charset !== 'utf-8') {
    return next(new VouchError(ERROR_CODES.unsupportedMediaType, `the body is declared as charset ${charset}: JSON bodies must be UTF-8 (Content-Type: application/json; charset=utf-8)`));
  }
  next();
};
