/**
 * Cluster IPs and node ports of Services, as upstream's service REST storage allocates them
 * around the generic store's writes (its beginCreate, beginUpdate and afterDelete hooks over
 * the bitmap allocators): taken before the strategy and validation, given back when the write
 * fails, released when the Service goes or changes type. A single-stack cluster: one
 * `--service-cluster-ip-range` (IPv4 or IPv6); dual-stack is not served.
 */
import type { ApiObject } from '../api';
import type { Store } from '../../store';
import { invalid, internalError } from '../../status';
import { fieldErrors, FieldPath, GoLiteral, type FieldError } from '../validation/field-errors';
import { goStringSlice } from '../validation/go-format';
import { goQuote } from '../validation/schema/go-values';
import { addrText, type Addr, parseAddr, parsePrefix, masked, is4 } from '../../util/go-netip';
import { CLUSTER_IP_NONE, needsClusterIP, needsHealthCheckNodePort, needsNodePorts, type Service, type ServiceSpec } from '../resources/services';
import { validateClusterIPsRelatedFields } from '../resources/service-validation';
import { RangeAllocator, RangeFullError, staticBand } from './range-allocator';

/** Called once the write it began succeeded or failed (the registry's `FinishWrite`). */
type FinishWrite = (success: boolean) => Promise<void>;

/** upstream's default `--service-cluster-ip-range`. */
export const DEFAULT_SERVICE_CIDR = '10.0.0.0/24';
/** upstream's default `--service-node-port-range`. */
export const DEFAULT_NODE_PORT_RANGE = '30000-32767';

export interface ServiceNetwork {
  /** `--service-cluster-ip-range`. */
  clusterIPRange?: string;
  /** `--service-node-port-range`, `<first>-<last>` (or `<first>+<size>`). */
  nodePortRange?: string;
}

/** An IP range: the addresses after the network address (and before the broadcast one). */
export class ServiceCIDR {
  readonly family: 'IPv4' | 'IPv6';
  readonly base: bigint;
  readonly size: number;
  readonly text: string;
  private readonly width: number;

  constructor(cidr: string) {
    const prefix = masked(parsePrefix(cidr));
    this.text = `${addrText(prefix.addr)}/${prefix.bits}`;
    this.family = is4(prefix.addr) ? 'IPv4' : 'IPv6';
    this.width = prefix.addr.bytes.length * 8;
    const total = 2n ** BigInt(this.width - prefix.bits);
    this.base = toBig(prefix.addr) + 1n;
    // IPv4 loses the network and broadcast addresses, IPv6 the first; a bitmap of at most 2^16.
    const usable = this.family === 'IPv4' ? total - 2n : total - 1n;
    this.size = Number(usable < 0n ? 0n : usable > 65536n ? 65536n : usable);
  }

  /** The whole range's size, for the static band (upstream's calculateRangeOffset). */
  get staticBand(): number {
    return staticBand(this.size + (this.family === 'IPv4' ? 2 : 1), 16, 16, 256);
  }

  offsetOf(ip: string): number | undefined {
    let addr: Addr;
    try {
      addr = parseAddr(ip);
    } catch {
      return undefined;
    }
    if (addr.bytes.length * 8 !== this.width) return undefined;
    const o = toBig(addr) - this.base;
    return o >= 0n && o < BigInt(this.size) ? Number(o) : undefined;
  }

  ipAt(offset: number): string {
    const value = this.base + BigInt(offset);
    const bytes = new Uint8Array(this.width / 8);
    let v = value;
    for (let i = bytes.length - 1; i >= 0; i--) {
      bytes[i] = Number(v & 0xffn);
      v >>= 8n;
    }
    return addrText({ bytes, zone: '' });
  }
}

function toBig(addr: Addr): bigint {
  let v = 0n;
  for (const b of addr.bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/**
 * A node port range as upstream's PortRange flag value parses it: `<first>-<last>`,
 * `<first>+<offset>` (the last is first + offset) or one port, both ends inclusive; an empty text
 * is size 0 (the caller's default). Throws with upstream's messages.
 */
export function parseNodePortRange(text: string): { base: number; size: number } {
  const value = text.trim();
  if (value === '') return { base: 0, size: 0 };
  const hyphen = value.indexOf('-');
  const plus = value.indexOf('+');
  let low: number;
  let high: number;
  if (hyphen < 0 && plus < 0) {
    low = high = goAtoi(value);
  } else if (plus < 0) {
    low = goAtoi(value.slice(0, hyphen));
    high = goAtoi(value.slice(hyphen + 1));
  } else if (hyphen < 0) {
    low = goAtoi(value.slice(0, plus));
    high = low + goAtoi(value.slice(plus + 1));
  } else {
    throw new Error(`unable to parse port range: ${value}`);
  }
  if (low > 65535 || high > 65535) throw new Error(`the port range cannot be greater than 65535: ${value}`);
  if (high < low) throw new Error(`end port cannot be less than start port: ${value}`);
  return { base: low, size: high - low + 1 };
}

/** Go's strconv.Atoi for a 64-bit int, with its error text. */
function goAtoi(text: string): number {
  const quoted = goQuote(text);
  if (!/^[+-]?[0-9]+$/.test(text)) throw new Error(`strconv.Atoi: parsing ${quoted}: invalid syntax`);
  const n = BigInt(text);
  if (n > 9223372036854775807n || n < -9223372036854775808n) throw new Error(`strconv.Atoi: parsing ${quoted}: value out of range`);
  return Number(n);
}

const SPEC = FieldPath.root('spec');
/** upstream's numRepairsBeforeLeakCleanup. */
const LEAK_REPAIRS = 3;

/** The registry's `WriteLifecycle` for Services. */
export class ServiceAllocation {
  readonly cidr: ServiceCIDR;
  readonly ports: { base: number; size: number };
  readonly ips: RangeAllocator;
  readonly nodePorts: RangeAllocator;

  constructor(store: Store, network: ServiceNetwork = {}, random?: (n: number) => number) {
    this.cidr = new ServiceCIDR(network.clusterIPRange ?? DEFAULT_SERVICE_CIDR);
    const ports = parseNodePortRange(network.nodePortRange ?? '');
    // An unset or empty range is upstream's default.
    this.ports = ports.size > 0 ? ports : parseNodePortRange(DEFAULT_NODE_PORT_RANGE);
    this.ips = new RangeAllocator({
      store,
      key: '/registry/ranges/serviceips',
      range: this.cidr.text,
      size: this.cidr.size,
      offset: this.cidr.staticBand,
      random,
    });
    this.nodePorts = new RangeAllocator({
      store,
      key: '/registry/ranges/servicenodeports',
      range: `${this.ports.base}-${this.ports.size}`,
      size: this.ports.size,
      offset: staticBand(this.ports.size, 16, 32, 128),
      random,
    });
  }

  /** The `kubernetes` Service's address: the first of the range. */
  get firstIP(): string {
    return this.cidr.ipAt(0);
  }

  async beginCreate(obj: ApiObject, dryRun: boolean): Promise<FinishWrite> {
    const svc = obj as Service;
    const spec = (svc.spec ??= {});
    normalizeClusterIPs(spec, undefined);
    const taken = new Taken();
    try {
      this.initIPFamilies(svc);
      if (needsClusterIP(spec)) await this.allocateClusterIP(svc, taken, dryRun);
      await this.allocateNodePorts(svc, undefined, taken, dryRun);
    } catch (err) {
      await this.giveBack(taken, dryRun);
      throw err;
    }
    return async (success) => {
      if (!success) await this.giveBack(taken, dryRun);
    };
  }

  async beginUpdate(obj: ApiObject, oldObj: ApiObject, dryRun: boolean): Promise<FinishWrite> {
    const svc = obj as Service;
    const old = oldObj as Service;
    const spec = (svc.spec ??= {});
    const was = old.spec ?? {};
    patchAllocatedValues(spec, was);
    normalizeClusterIPs(spec, was);
    const taken = new Taken();
    const released = new Taken();
    try {
      if (spec.type !== 'ExternalName' && (spec.ipFamilyPolicy === undefined || (spec.ipFamilies ?? []).length === 0)) this.initIPFamilies(svc);
      const hadIP = needsClusterIP(was) && (was.clusterIPs ?? []).length > 0;
      if (needsClusterIP(spec) && !hadIP) await this.allocateClusterIP(svc, taken, dryRun);
      if (hadIP && !needsClusterIP(spec)) released.ips.push(...this.ipOffsets(was));
      await this.allocateNodePorts(svc, old, taken, dryRun);
      // What the new type does not need goes, even where the body still lists it (the strategy drops it later).
      const kept = new Set(
        this.nodePortsOf({
          ports: needsNodePorts(spec) || spec.type === 'LoadBalancer' ? spec.ports : [],
          healthCheckNodePort: needsHealthCheckNodePort(spec) ? spec.healthCheckNodePort : 0,
        }),
      );
      released.ports.push(...this.nodePortsOf(was).filter((p) => !kept.has(p)));
    } catch (err) {
      await this.giveBack(taken, dryRun);
      throw err;
    }
    return async (success) => {
      if (!success) await this.giveBack(taken, dryRun);
      else if (!dryRun) await this.giveBack(released, false);
    };
  }

  async afterDelete(obj: ApiObject): Promise<void> {
    const spec = (obj as Service).spec ?? {};
    const released = new Taken();
    if (needsClusterIP(spec)) released.ips.push(...this.ipOffsets(spec));
    released.ports.push(...this.nodePortsOf(spec));
    await this.giveBack(released, false);
  }

  /**
   * One round of upstream's repair controllers: the bitmaps are read, then the Services listed
   * (`list`, from the store); what the Services hold is marked taken, and an offset taken but
   * held by none is freed once three rounds in a row found it so (a write between allocating and
   * storing its Service holds one meanwhile). Each bitmap is written only if it is still the one
   * read first: a release or allocation made meanwhile makes the round give it up (false).
   */
  async repair(list: () => Promise<readonly Service[]>): Promise<boolean> {
    const [ipsBefore, portsBefore] = await Promise.all([this.ips.snapshot(), this.nodePorts.snapshot()]);
    const services = await list();
    const ips = new Set(services.flatMap((s) => (needsClusterIP(s.spec ?? {}) ? this.ipOffsets(s.spec ?? {}) : [])));
    const ports = new Set(services.flatMap((s) => this.nodePortsOf(s.spec ?? {})));
    const ipsDone = await this.ips.replace(ipsBefore, this.reconcile(ipsBefore.taken, ips, this.leakedIPs));
    const portsDone = await this.nodePorts.replace(portsBefore, this.reconcile(portsBefore.taken, ports, this.leakedPorts));
    return ipsDone && portsDone;
  }

  private readonly leakedIPs = new Map<number, number>();
  private readonly leakedPorts = new Map<number, number>();

  private reconcile(taken: ReadonlySet<number>, used: Set<number>, leaked: Map<number, number>): Set<number> {
    const next = new Set(used);
    for (const o of taken) {
      if (used.has(o)) {
        leaked.delete(o);
        continue;
      }
      const seen = (leaked.get(o) ?? 0) + 1;
      if (seen >= LEAK_REPAIRS) leaked.delete(o);
      else {
        leaked.set(o, seen);
        next.add(o);
      }
    }
    for (const o of [...leaked.keys()]) if (!taken.has(o)) leaked.delete(o);
    return next;
  }

  /** The offsets of a Service's cluster IPs that lie in this range. */
  ipOffsets(spec: ServiceSpec): number[] {
    return (spec.clusterIPs ?? []).map((ip) => this.cidr.offsetOf(ip)).filter((o): o is number => o !== undefined);
  }

  /** The offsets of a Service's node ports (and health-check node port) in this range. */
  nodePortsOf(spec: ServiceSpec): number[] {
    const ports = [...(spec.ports ?? []).map((p) => p.nodePort ?? 0), spec.healthCheckNodePort ?? 0];
    return [...new Set(ports.filter((p) => p >= this.ports.base && p < this.ports.base + this.ports.size).map((p) => p - this.ports.base))];
  }

  private async giveBack(taken: Taken, dryRun: boolean): Promise<void> {
    if (dryRun) return;
    await this.ips.release(taken.ips);
    await this.nodePorts.release(taken.ports);
    taken.ips.length = 0;
    taken.ports.length = 0;
  }

  /**
   * upstream's initIPFamilyFields for a single-stack cluster: the policy defaults to SingleStack
   * (RequireDualStack for a headless Service without selector, which lists both families), the
   * families follow the cluster IPs, and what the cluster cannot serve is refused.
   */
  private initIPFamilies(svc: Service): void {
    const spec = svc.spec!;
    if (spec.type === 'ExternalName') return;
    const name = svc.metadata?.name ?? '';
    const ips = spec.clusterIPs ?? [];
    if (spec.ipFamilyPolicy === undefined && (ips.length === 2 || (spec.ipFamilies ?? []).length === 2)) spec.ipFamilyPolicy = 'RequireDualStack';
    const loose = validateClusterIPsRelatedFields(spec);
    if (loose.length > 0) throw invalid({ group: '', kind: 'Service' }, name, loose);
    const errs: FieldError[] = [];
    const policy = new GoLiteral(spec.ipFamilyPolicy === undefined ? 'null' : JSON.stringify(spec.ipFamilyPolicy));
    if (spec.ipFamilyPolicy === 'SingleStack') {
      if (ips.length === 2) {
        errs.push(
          fieldErrors.invalid(SPEC.child('ipFamilyPolicy'), policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"),
        );
      }
      if ((spec.ipFamilies ?? []).length === 2) {
        errs.push(
          fieldErrors.invalid(SPEC.child('ipFamilyPolicy'), policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"),
        );
      }
    }
    const families = (spec.ipFamilies ??= []);
    ips.forEach((ip, i) => {
      if (ip === CLUSTER_IP_NONE || i < families.length) return;
      const family = ip.includes(':') ? 'IPv6' : 'IPv4';
      if (family !== this.cidr.family) {
        errs.push(fieldErrors.invalid(SPEC.child('clusterIPs').index(i), new GoLiteral(goStringSlice(ips)), `${family} is not configured on this cluster`));
      } else families.push(family);
    });
    if (errs.length > 0) throw invalid({ group: '', kind: 'Service' }, name, errs);
    // A headless Service without selector may list both families, even here.
    if (spec.clusterIP === CLUSTER_IP_NONE && Object.keys(spec.selector ?? {}).length === 0) {
      spec.ipFamilyPolicy ??= 'RequireDualStack';
      if (families.length === 0) families.push(this.cidr.family);
      if (families.length < 2 && spec.ipFamilyPolicy !== 'SingleStack') families.push(families[0] === 'IPv4' ? 'IPv6' : 'IPv4');
      return;
    }
    spec.ipFamilyPolicy ??= 'SingleStack';
    if (spec.ipFamilyPolicy === 'RequireDualStack') {
      errs.push(
        fieldErrors.invalid(
          SPEC.child('ipFamilyPolicy'),
          policy.text === 'null' ? new GoLiteral('"RequireDualStack"') : policy,
          'this cluster is not configured for dual-stack services',
        ),
      );
    }
    families.forEach((family, i) => {
      if (family !== this.cidr.family) errs.push(fieldErrors.invalid(SPEC.child('ipFamilies').index(i), family, `${family} is not configured on this cluster`));
    });
    if (errs.length > 0) throw invalid({ group: '', kind: 'Service' }, name, errs);
    if (families.length === 0) families.push(this.cidr.family);
    // PreferDualStack on a single-stack cluster keeps one family.
    if (families.length > 1) families.length = 1;
  }

  /** upstream's allocClusterIPs: the IP asked for, or the next free one. */
  private async allocateClusterIP(svc: Service, taken: Taken, dryRun: boolean): Promise<void> {
    const spec = svc.spec!;
    const name = svc.metadata?.name ?? '';
    const asked = spec.clusterIPs?.[0];
    if (asked) {
      const offset = this.cidr.offsetOf(asked);
      const failed = (why: string) =>
        invalid({ group: '', kind: 'Service' }, name, [
          fieldErrors.invalid(SPEC.child('clusterIPs'), new GoLiteral(goStringSlice(spec.clusterIPs)), `failed to allocate IP ${asked}: ${why}`),
        ]);
      if (offset === undefined) throw failed(`the provided IP (${asked}) is not in the valid range. The range of valid IPs is ${this.cidr.text}`);
      if (!(await this.ips.allocate(offset, dryRun))) throw failed('provided IP is already allocated');
      if (!dryRun) taken.ips.push(offset);
      return;
    }
    let offset: number;
    try {
      offset = await this.ips.allocateNext(dryRun);
    } catch (err) {
      if (err instanceof RangeFullError) throw internalError(`failed to allocate a serviceIP: ${err.message}`);
      throw err;
    }
    if (!dryRun) taken.ips.push(offset);
    const ip = this.cidr.ipAt(offset);
    spec.clusterIP = ip;
    spec.clusterIPs = [ip];
  }

  /**
   * upstream's initNodePorts and allocHealthCheckNodePort: each port's node port, the one asked
   * for or a free one (ports of one number share theirs across protocols), kept across updates.
   */
  private async allocateNodePorts(svc: Service, old: Service | undefined, taken: Taken, dryRun: boolean): Promise<void> {
    const spec = svc.spec!;
    const name = svc.metadata?.name ?? '';
    const had = new Set(old ? this.nodePortsOf(old.spec ?? {}).map((o) => o + this.ports.base) : []);
    const take = async (port: number, path: FieldPath): Promise<void> => {
      if (had.has(port)) return;
      const offset = port - this.ports.base;
      const failed = (why: string) => invalid({ group: '', kind: 'Service' }, name, [fieldErrors.invalid(path, port, why)]);
      if (offset < 0 || offset >= this.ports.size) {
        throw failed(`provided port is not in the valid range. The range of valid ports is ${this.ports.base}-${this.ports.base + this.ports.size - 1}`);
      }
      if (!(await this.nodePorts.allocate(offset, dryRun))) throw failed('provided port is already allocated');
      if (!dryRun) taken.ports.push(offset);
      had.add(port);
    };
    const next = async (): Promise<number> => {
      try {
        const offset = await this.nodePorts.allocateNext(dryRun);
        if (!dryRun) taken.ports.push(offset);
        return offset + this.ports.base;
      } catch (err) {
        if (err instanceof RangeFullError) throw internalError(`failed to allocate a nodePort: ${err.message}`);
        throw err;
      }
    };
    if (needsNodePorts(spec)) {
      const byPort = new Map<number, number>();
      const ports = spec.ports ?? [];
      for (const [i, p] of ports.entries()) {
        if (!p.nodePort) continue;
        await take(p.nodePort, SPEC.child('ports').index(i).child('nodePort'));
        byPort.set(p.port, p.nodePort);
      }
      for (const p of ports) {
        if (p.nodePort) continue;
        const shared = byPort.get(p.port);
        p.nodePort = shared ?? (await next());
        byPort.set(p.port, p.nodePort);
      }
    } else if (spec.type === 'LoadBalancer') {
      // allocateLoadBalancerNodePorts false: only node ports asked for are taken.
      for (const [i, p] of (spec.ports ?? []).entries()) if (p.nodePort) await take(p.nodePort, SPEC.child('ports').index(i).child('nodePort'));
    }
    if (needsHealthCheckNodePort(spec)) {
      if (spec.healthCheckNodePort) await take(spec.healthCheckNodePort, SPEC.child('healthCheckNodePort'));
      else spec.healthCheckNodePort = await next();
    }
  }
}

/** Offsets taken (or to give back) by one write. */
class Taken {
  readonly ips: number[] = [];
  readonly ports: number[] = [];
}

/**
 * upstream's normalizeClusterIPs: a client that sets only `clusterIP` (an older one) gets
 * `clusterIPs` to match; on an update, a left-out or cleared list follows `clusterIP`.
 */
function normalizeClusterIPs(spec: ServiceSpec, old: ServiceSpec | undefined): void {
  const ips = spec.clusterIPs ?? [];
  if (!old) {
    if (spec.clusterIP && ips.length === 0) spec.clusterIPs = [spec.clusterIP];
    return;
  }
  const oldIPs = old.clusterIPs ?? [];
  if (oldIPs.length > 0 && ips.length === 0 && old.clusterIP === spec.clusterIP) spec.clusterIPs = [...oldIPs];
  if (old.clusterIP !== spec.clusterIP) {
    const same = JSON.stringify(spec.clusterIPs ?? []) === JSON.stringify(oldIPs);
    if (old.clusterIP && !spec.clusterIP) {
      if (same) delete spec.clusterIPs;
    } else if (same) spec.clusterIPs = [spec.clusterIP ?? ''];
  }
}

/**
 * upstream's patchAllocatedValues: an update that leaves out what was allocated (a client's
 * full object without clusterIP or nodePorts, as `kubectl apply` sends) keeps it.
 */
function patchAllocatedValues(spec: ServiceSpec, was: ServiceSpec): void {
  if (needsClusterIP(was) && needsClusterIP(spec)) {
    if (!spec.clusterIP) spec.clusterIP = was.clusterIP;
    if ((spec.clusterIPs ?? []).length === 0 && (was.clusterIPs ?? []).length > 0) spec.clusterIPs = [...was.clusterIPs!];
  }
  if (needsNodePorts(was) && needsNodePorts(spec)) {
    const before = new Map((was.ports ?? []).map((p) => [`${p.port}/${p.protocol}`, p.nodePort]));
    const byNumber = new Map((was.ports ?? []).map((p) => [p.port, p.nodePort]));
    for (const p of spec.ports ?? []) if (!p.nodePort) p.nodePort = before.get(`${p.port}/${p.protocol}`) ?? byNumber.get(p.port) ?? undefined;
    for (const p of spec.ports ?? []) if (p.nodePort === undefined) delete p.nodePort;
  }
  if (needsHealthCheckNodePort(was) && needsHealthCheckNodePort(spec) && !spec.healthCheckNodePort) spec.healthCheckNodePort = was.healthCheckNodePort;
}
