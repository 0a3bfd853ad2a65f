/**
 * Vonage's signed webhooks (Messages and Voice APIs): `Authorization: Bearer <JWT>`, HS256 with the
 * account's signature secret, whose `payload_hash` claim is the hex SHA-256 of the body. The
 * signature itself is checked by the vendor's `@vonage/jwt` (`verifySignature`); it does not look at
 * `payload_hash`, the application or our clock, so this module does: a body changed after signing,
 * a token for another application or key, a token too old or from the future are all refused.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { verifySignature } from '@vonage/jwt';

/** How far a token's `iat` may be from our clock, either way; also the longest a token is accepted. */
export const VONAGE_SIGNATURE_TOLERANCE_SEC = 300;
/** Anything longer is no Vonage token; refused before any parsing. */
const MAX_TOKEN_LENGTH = 8 * 1024;

export interface VonageSignatureCheck {
  signatureSecret: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  nowMs: number;
  /** When set, a token naming another application is refused. */
  applicationId?: string;
  /** When set, a token naming another API key is refused. */
  apiKey?: string;
  toleranceSec?: number;
}

/** `missing`: no bearer token at all (401); `invalid`: a token we do not accept (403). */
type VonageSignatureVerdict = 'valid' | 'missing' | 'invalid';

export function verifyVonageWebhook(check: VonageSignatureCheck): VonageSignatureVerdict {
  const token = bearerToken(check.headers);
  if (token === undefined) return 'missing';
  if (token.length > MAX_TOKEN_LENGTH || !Buffer.isBuffer(check.rawBody)) return 'invalid';
  if (!verifySignature(token, check.signatureSecret)) return 'invalid';
  const claims = decodeClaims(token);
  if (!claims) return 'invalid';
  if (!payloadHashMatches(claims.payload_hash, check.rawBody)) return 'invalid';
  const nowSec = check.nowMs / 1000;
  const tolerance = check.toleranceSec ?? VONAGE_SIGNATURE_TOLERANCE_SEC;
  if (typeof claims.iat !== 'number' || Math.abs(nowSec - claims.iat) > tolerance) return 'invalid';
  if (claims.exp !== undefined && (typeof claims.exp !== 'number' || claims.exp <= nowSec)) return 'invalid';
  if (check.applicationId !== undefined && claims.application_id !== check.applicationId) return 'invalid';
  if (check.apiKey !== undefined && claims.api_key !== undefined && claims.api_key !== check.apiKey) return 'invalid';
  return 'valid';
}

/** The hex SHA-256 Vonage puts in `payload_hash`, for test vectors and for the check below. */
export function vonagePayloadHash(rawBody: string | Buffer): string {
  return createHash('sha256').update(rawBody).digest('hex');
}

interface VonageWebhookClaims {
  iat?: unknown;
  exp?: unknown;
  payload_hash?: unknown;
  application_id?: unknown;
  api_key?: unknown;
}

function payloadHashMatches(claimed: unknown, rawBody: Buffer): boolean {
  if (typeof claimed !== 'string' || !/^[0-9a-fA-F]{64}$/.test(claimed)) return false;
  return timingSafeEqual(Buffer.from(claimed.toLowerCase(), 'hex'), createHash('sha256').update(rawBody).digest());
}

/** The claims of a token whose signature was already verified. */
function decodeClaims(token: string): VonageWebhookClaims | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims) ? (claims as VonageWebhookClaims) : undefined;
  } catch {
    return undefined;
  }
}

function bearerToken(headers: Record<string, string | string[] | undefined>): string | undefined {
  const raw = headers.authorization ?? Object.entries(headers).find(([key]) => key.toLowerCase() === 'authorization')?.[1];
  const value = Array.isArray(raw) ? raw[0] : raw;
  const match = value === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match ? match[1] : undefined;
}
