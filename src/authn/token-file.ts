/**
 * Static tokens (`--token-auth-file`), as upstream's token file: CSV records of at least three
 * columns — token, user name, uid — and an optional fourth, the comma-separated groups (quote it
 * when it holds commas). Tokens last as long as the process; a changed file needs a restart.
 */
import { parse } from 'csv-parse/sync';
import type { UserInfo } from '../core';
import { type AuthenticationResult, NO_OPINION, type TokenAuthenticator } from './types';

/** A token file that cannot be used: the server refuses to start, naming the file and record. */
export class TokenFileError extends Error {}

export interface TokenFile {
  /** User of each token. */
  users: ReadonlyMap<string, UserInfo>;
  /** Records skipped as upstream skips them (empty token), and tokens given twice (the last wins). */
  warnings: string[];
}

export function parseTokenFile(text: string, file: string): TokenFile {
  let records: string[][];
  try {
    records = parse(text, { relax_column_count: true, skip_empty_lines: true }) as string[][];
  } catch (err) {
    throw new TokenFileError(`error reading token file '${file}': ${(err as Error).message}`);
  }
  const users = new Map<string, UserInfo>();
  const warnings: string[] = [];
  records.forEach((record, i) => {
    const number = i + 1;
    if (record.length < 3) {
      throw new TokenFileError(`token file '${file}' must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    }
    // Values are taken as written (Go's CSV reader does not trim).
    const token = record[0]!;
    if (token === '') {
      warnings.push(`empty token has been found in token file '${file}', record number '${number}'`);
      return;
    }
    if (users.has(token)) warnings.push(`duplicate token has been found in token file '${file}', record number '${number}'`);
    const user: UserInfo = { username: record[1]!, uid: record[2]!, groups: [] };
    if (record.length >= 4) user.groups = record[3]!.split(',');
    users.set(token, user);
  });
  return { users, warnings };
}

export function tokenFileAuthenticator(file: TokenFile): TokenAuthenticator {
  return {
    name: 'token-file',
    authenticateToken(token: string): AuthenticationResult {
      const user = file.users.get(token);
      return user ? { outcome: 'authenticated', user: { ...user, groups: [...user.groups] } } : NO_OPINION;
    },
  };
}
