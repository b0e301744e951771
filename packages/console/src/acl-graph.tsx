import { type AclEdge, aclDirections } from './mesh-acls.js';

/** Radius of a node's circle. */
const NODE_RADIUS = 26;
/** Gap between a node's circle and its name. */
const LABEL_GAP = 10;
/** How far an arrow runs to the right of the line between the two centres. */
const EDGE_OFFSET = 8;
/** Names longer than this are cut with an ellipsis (the full name is the name's tooltip and in the description). */
const LABEL_MAX_CHARS = 24;

/** A text style of the graph (console.css): its font size and, generously, the width of one character. */
interface Font {
  size: number;
  charWidth: number;
}
const NODE_FONT: Font = { size: 15, charWidth: 9.5 };
const EDGE_FONT: Font = { size: 13, charWidth: 8 };

/** A text placed by {@link labelAt}, with the box it covers (estimated from its length). */
interface Label {
  text: string;
  x: number;
  y: number;
  anchor: 'start' | 'middle' | 'end';
  box: { left: number; right: number; top: number; bottom: number };
}

/**
 * `text` placed next to the point (`x`, `y`) on the side the direction
 * (`dx`, `dy`) points to: to its right, left, above or below, so that the
 * whole text lies on that side of the point.
 */
function labelAt(x: number, y: number, dx: number, dy: number, text: string, font: Font): Label {
  const anchor = dx > 0.3 ? 'start' : dx < -0.3 ? 'end' : 'middle';
  const baseline = dy < -0.3 ? y : dy > 0.3 ? y + font.size * 0.8 : y + font.size * 0.35;
  const width = text.length * font.charWidth;
  const left = anchor === 'start' ? x : anchor === 'end' ? x - width : x - width / 2;
  return {
    text,
    x,
    y: baseline,
    anchor,
    box: { left, right: left + width, top: baseline - font.size, bottom: baseline + font.size * 0.3 },
  };
}

/**
 * Agents on a circle, one arrow per (from, to) direction labelled with its
 * allowed ports; online peers drawn filled. Arrows run between the circles'
 * edges, inside the ring of nodes; each name sits outside the ring, away
 * from the centre, so no arrow crosses a name. The view box is fitted to
 * the nodes and all labels and drawn at that size (smaller on a narrow
 * screen, console.css); without peers and ACLs there is no graph.
 */
export function AclGraph(props: { agents: string[]; online: ReadonlySet<string>; acls: AclEdge[] }) {
  const names = [...new Set([...props.agents, ...props.acls.flatMap((acl) => [acl.from_agent, acl.to_agent])])].sort();
  if (names.length === 0) return null;
  const radius = names.length > 1 ? Math.max(190, (names.length * (2 * NODE_RADIUS + 24)) / (2 * Math.PI)) : 0;
  const nodes = names.map((name, index) => {
    const angle = (2 * Math.PI * index) / Math.max(names.length, 1) - Math.PI / 2;
    const dx = Math.cos(angle);
    const dy = Math.sin(angle);
    const text = name.length > LABEL_MAX_CHARS ? `${name.slice(0, LABEL_MAX_CHARS - 1)}…` : name;
    const gap = radius + NODE_RADIUS + LABEL_GAP;
    return { name, x: radius * dx, y: radius * dy, label: labelAt(gap * dx, gap * dy, dx, dy, text, NODE_FONT) };
  });
  const position = new Map(nodes.map((node) => [node.name, node]));
  const directions = aclDirections(props.acls);
  const edges = directions.map((direction) => {
    const a = position.get(direction.from)!;
    const b = position.get(direction.to)!;
    const length = Math.hypot(b.x - a.x, b.y - a.y) || 1;
    const ux = (b.x - a.x) / length;
    const uy = (b.y - a.y) / length;
    // Each direction runs EDGE_OFFSET px to its right, so a→b and b→a do not overlap, with its ends on the circles' edges.
    const nx = -uy;
    const ny = ux;
    const inset = Math.sqrt(NODE_RADIUS ** 2 - EDGE_OFFSET ** 2);
    const x1 = a.x + ux * inset + nx * EDGE_OFFSET;
    const y1 = a.y + uy * inset + ny * EDGE_OFFSET;
    const x2 = b.x - ux * inset + nx * EDGE_OFFSET;
    const y2 = b.y - uy * inset + ny * EDGE_OFFSET;
    const text = direction.ports.join(', ');
    return { x1, y1, x2, y2, label: labelAt((x1 + x2) / 2 + nx * 6, (y1 + y2) / 2 + ny * 6, nx, ny, text, EDGE_FONT) };
  });
  const boxes = [
    ...nodes.map((node) => ({
      left: node.x - NODE_RADIUS,
      right: node.x + NODE_RADIUS,
      top: node.y - NODE_RADIUS,
      bottom: node.y + NODE_RADIUS,
    })),
    ...nodes.map((node) => node.label.box),
    ...edges.map((edge) => edge.label.box),
  ];
  const pad = 16;
  const minX = Math.min(...boxes.map((box) => box.left)) - pad;
  const maxX = Math.max(...boxes.map((box) => box.right)) + pad;
  const minY = Math.min(...boxes.map((box) => box.top)) - pad;
  const maxY = Math.max(...boxes.map((box) => box.bottom)) + pad;
  const description = directions.map((d) => `${d.from} may reach ${d.to} on ${d.ports.join(', ')}`).join('; ');
  const f = (value: number) => value.toFixed(1);
  return (
    <svg
      class="acl-graph"
      viewBox={`${f(minX)} ${f(minY)} ${f(maxX - minX)} ${f(maxY - minY)}`}
      width={f(maxX - minX)}
      height={f(maxY - minY)}
      role="img"
      aria-labelledby="acl-graph-title acl-graph-desc"
    >
      <title id="acl-graph-title">Mesh ACL graph</title>
      <desc id="acl-graph-desc">{description || 'No ACLs.'}</desc>
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" class="arrow-head" />
        </marker>
      </defs>
      {edges.map((edge) => (
        <g class="edge">
          <line x1={f(edge.x1)} y1={f(edge.y1)} x2={f(edge.x2)} y2={f(edge.y2)} marker-end="url(#arrow)" />
          <text x={f(edge.label.x)} y={f(edge.label.y)} text-anchor={edge.label.anchor}>
            {edge.label.text}
          </text>
        </g>
      ))}
      {nodes.map((node) => (
        <g class={props.online.has(node.name) ? 'node online' : 'node offline'}>
          <circle cx={f(node.x)} cy={f(node.y)} r={NODE_RADIUS} />
          <text x={f(node.label.x)} y={f(node.label.y)} text-anchor={node.label.anchor}>
            {node.label.text !== node.name ? <title>{node.name}</title> : null}
            {node.label.text}
          </text>
        </g>
      ))}
    </svg>
  );
}
