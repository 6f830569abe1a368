/**
 * `/version`: upstream's version.Info for release 1.32, written as upstream's WriteRawJSON
 * writes it (indented JSON whatever the Accept header). The build suffix marks the server as
 * Keelson without changing the release clients compare against.
 */
import { rfc3339 } from '../../clock';
import { writeRawJson } from '../respond';
import type { Exchange } from '../types';

export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };

export function keelsonVersion(options: { keelsonVersion?: string; buildDate?: number } = {}): VersionInfo {
  const suffix = options.keelsonVersion ? `+keelson-${options.keelsonVersion}` : '+keelson';
  return {
    major: '1',
    minor: '32',
    gitVersion: `v1.32.0${suffix}`,
    gitCommit: '',
    gitTreeState: '',
    buildDate: rfc3339(options.buildDate ?? Date.now()),
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${GO_ARCH[process.arch] ?? process.arch}`,
  };
}

export function serveVersion(exchange: Exchange, info: VersionInfo): void {
  writeRawJson(exchange, 200, info);
}
