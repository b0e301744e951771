/** One allowed flow: `from` may reach `to` on `port`/`proto`. */
export interface AclEdge {
  from_agent: string;
  to_agent: string;
  port: number;
  proto: string;
}

/** Agents on a circle, one arrow per (from, to) pair labelled with its allowed ports; online peers drawn filled. */
export function AclGraph(props: { agents: string[]; online: ReadonlySet<string>; acls: AclEdge[] }) {
  const names = [...new Set([...props.agents, ...props.acls.flatMap((acl) => [acl.from_agent, acl.to_agent])])].sort();
  const size = 560;
  const center = size / 2;
  const radius = names.length > 1 ? center - 90 : 0;
  const position = new Map(
    names.map((name, index) => {
      const angle = (2 * Math.PI * index) / Math.max(names.length, 1) - Math.PI / 2;
      return [name, { x: center + radius * Math.cos(angle), y: center + radius * Math.sin(angle) }];
    }),
  );
  const pairs = new Map<string, { from: string; to: string; ports: string[] }>();
  for (const acl of props.acls) {
    const key = `${acl.from_agent}\u0000${acl.to_agent}`;
    const pair = pairs.get(key) ?? { from: acl.from_agent, to: acl.to_agent, ports: [] };
    pair.ports.push(`${acl.port}/${acl.proto}`);
    pairs.set(key, pair);
  }
  const nodeRadius = 26;
  const description = [...pairs.values()].map((pair) => `${pair.from} may reach ${pair.to} on ${pair.ports.join(', ')}`).join('; ');
  return (
    <svg class="acl-graph" viewBox={`0 0 ${size} ${size}`} role="img" aria-labelledby="acl-graph-title acl-graph-desc">
      <title id="acl-graph-title">Mesh ACL graph</title>
      <desc id="acl-graph-desc">{description || 'No ACLs.'}</desc>
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" class="arrow-head" />
        </marker>
      </defs>
      {[...pairs.values()].map((pair) => {
        const a = position.get(pair.from)!;
        const b = position.get(pair.to)!;
        const length = Math.hypot(b.x - a.x, b.y - a.y) || 1;
        const ux = (b.x - a.x) / length;
        const uy = (b.y - a.y) / length;
        // Offset each direction sideways so a→b and b→a do not overlap.
        const ox = -uy * 8;
        const oy = ux * 8;
        const x1 = a.x + ux * nodeRadius + ox;
        const y1 = a.y + uy * nodeRadius + oy;
        const x2 = b.x - ux * nodeRadius + ox;
        const y2 = b.y - uy * nodeRadius + oy;
        return (
          <g class="edge">
            <line x1={x1.toFixed(1)} y1={y1.toFixed(1)} x2={x2.toFixed(1)} y2={y2.toFixed(1)} marker-end="url(#arrow)" />
            <text x={((x1 + x2) / 2 + ox * 1.6).toFixed(1)} y={((y1 + y2) / 2 + oy * 1.6).toFixed(1)} text-anchor="middle">
              {pair.ports.join(', ')}
            </text>
          </g>
        );
      })}
      {names.map((name) => {
        const p = position.get(name)!;
        return (
          <g class={props.online.has(name) ? 'node online' : 'node offline'}>
            <circle cx={p.x.toFixed(1)} cy={p.y.toFixed(1)} r={nodeRadius} />
            <text x={p.x.toFixed(1)} y={(p.y + nodeRadius + 18).toFixed(1)} text-anchor="middle">
              {name}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
