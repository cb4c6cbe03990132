// What the page carries besides its SVG: one JSON object, written by strata view in Node
// and read by the page's script (./client.ts). Types only: both sides import them.
//
// A replay's trace can hold 100,000 packets and more, so the packets travel in a compact
// form: every distinct step once (with the line `strata trace --packet N` prints for it),
// every distinct path once (a list of steps), and per packet a few numbers in typed
// arrays, base64-encoded. Bytes of each hop are kept for a chosen range of packets only.

export interface PageData {
  /** The description, as given to strata view. */
  readonly spec: string;
  readonly networks: readonly {
    readonly name: string;
    readonly design: string;
    readonly underlays: readonly string[];
  }[];
  /** What each design the page names is: the registry's summary (src/wire/designs.ts). */
  readonly designs: Readonly<Record<string, string>>;
  /** By node id (data-node in the SVG). */
  readonly nodes: Readonly<Record<string, NodeData>>;
  /** By qualified name (data-link in the SVG). */
  readonly links: Readonly<Record<string, LinkData>>;
  readonly run?: RunData;
  /** With --analysis: what `strata analyze` says of the description. */
  readonly analysis?: AnalysisData;
}

export interface NodeData {
  readonly kind: "member" | "external" | "junction";
  readonly label: string;
  readonly network: string;
  readonly member?: string;
  readonly name?: string;
  readonly role?: string;
  readonly machine?: string;
}

export interface LinkData {
  readonly name: string;
  readonly network: string;
  readonly mode: string;
  readonly kind: string;
  readonly sessions: readonly string[];
  readonly bridging: boolean;
  readonly shared?: string;
  readonly group?: string;
  readonly external?: string;
}

export interface RunData {
  /** The output directory of `strata run`, as given. */
  readonly dir: string;
  readonly packets: {
    readonly injected: number;
    readonly copies: number;
    readonly delivered: number;
    readonly dropped: number;
    readonly exited: number;
  };
  /** By qualified name. */
  readonly links: Readonly<Record<string, { readonly packets: number; readonly bytes: number }>>;
  /** By member ("network.key"), and "(outside)" for drops before any member held the packet. */
  readonly members: Readonly<
    Record<string, { readonly delivered: number; readonly drops: Readonly<Record<string, number>> }>
  >;
  /** Table rows that matched packets. */
  readonly rows: readonly {
    readonly member: string;
    readonly table: string;
    readonly row: number | "default";
    readonly rule: string;
    readonly hits: number;
    /** Where the row came from, as `strata check --rows` says it: "routes: h1..h4 (4)", "hand: 12:9 networks…". */
    readonly origin?: string;
  }[];
  readonly trace?: TraceData;
  /** What the page could not show, and why (no trace; a link whose bytes could not be matched to packets). */
  readonly notes: readonly string[];
}

/** Per packet, in PACKET_FIELDS order, in `packets` (u32 each). */
export const PACKET_FIELDS = ["number", "endpoint", "path", "len", "fates", "nsec"] as const;

export interface TraceData {
  /** Packets in the trace. */
  readonly count: number;
  /** u32 × PACKET_FIELDS.length per packet, base64. */
  readonly packets: string;
  /** f64 per packet: the capture time's whole seconds, base64. */
  readonly seconds: string;
  readonly endpoints: readonly string[];
  /** Where packets ended: "delivered to tenant.vm5", "dropped at lan.h4 (acquire-miss)", "left on lan.uplink". */
  readonly fates: readonly string[];
  /** Each packet's fates: indexes into `fates`. */
  readonly fateSets: readonly (readonly number[])[];
  readonly steps: readonly StepData[];
  /** Every distinct path's steps, as indexes into `steps`: u16 (or u32 when `wide`), base64. */
  readonly paths: string;
  readonly wide: boolean;
  /** Where each path starts in `paths`, and one past the last: u32, base64. */
  readonly pathStarts: string;
  /** Packets whose line reached its size limit: steps not kept, by packet number. */
  readonly cut: Readonly<Record<string, number>>;
  readonly bytes?: BytesData;
}

export interface StepData {
  readonly copy: number;
  readonly step: string;
  /** The step as `strata trace --packet N` shows it, after `[copy] `. */
  readonly text: string;
  /** Node ids the step is at: the member, a hand-off's two members, a link's sender. */
  readonly nodes: readonly string[];
  /** A link step: the link's qualified name. */
  readonly link?: string;
}

export interface BytesData {
  /** The packets whose bytes the page holds, as --bytes wrote them. */
  readonly packets: string;
  /** Every distinct record's bytes, hex. */
  readonly records: readonly string[];
  readonly views: readonly ByteView[];
  /** By packet number: for each of its steps, an index into `views`, or −1. */
  readonly steps: Readonly<Record<string, readonly number[]>>;
}

/** Bytes at a step: a record, where the step's part starts, and the headers decoded from there. */
export interface ByteView {
  readonly record: number;
  readonly at: number;
  /** What the bytes are: "crossed lan.a.1-sw.1", "popped by lan.b", "pushed by overlay.a", "delivered to tenant.vm5".
   * */
  readonly what: string;
  /** Only the first layer is the step's (a header pushed or popped); the rest is shown for context. */
  readonly only: boolean;
  readonly layers: readonly LayerData[];
}

export interface LayerData {
  readonly design: string;
  readonly at: number;
  readonly len: number;
  readonly fields: readonly (readonly [string, string, string])[];
}

/** `strata analyze`'s report, and its loops and black holes with their paths, for the page's Analysis panel. */
export interface AnalysisData {
  /** Every property holds. */
  readonly ok: boolean;
  /** Header classes, by design. */
  readonly classes: Readonly<Record<string, number>>;
  /** A network, a bridged set of networks, or networks joined by subduction, as `strata analyze` reports them. */
  readonly components: readonly AnalysisComponent[];
  /** The layering demand and Figure 9's inclusions: properties of the whole description. */
  readonly properties: readonly PropertyData[];
  /** The loops and black holes (`strata analyze --loops --black-holes`), each with its path of rows. */
  readonly findings: readonly FindingData[];
  /** The budget stopped the analysis (strata analyze's limits): where, and that what is shown is what it found. */
  readonly cut?: string;
}

export interface AnalysisComponent {
  readonly kind: "network" | "bridged" | "subduction";
  readonly name: string;
  /** Its members' node ids (data-node in the SVG), in the matrix's order. */
  readonly members: readonly string[];
  /** Per origin, per member (both in `members`' order): how many header classes go from one to the other (0: none);
   * empty for a component of more than 200 members. */
  readonly classes: readonly (readonly number[])[];
  /** Pairs of distinct members some class joins, of all pairs (the matrix is left out above 200 members: n² cells). */
  readonly reachable: { readonly pairs: number; readonly of: number };
  readonly properties: readonly PropertyData[];
  /** For a cell "ORIGIN.MEMBER" (indexes into `members`): one header class's path from the one to the other. Only for
   * components of up to 64 members. */
  readonly routes: Readonly<Record<string, RouteData>>;
  /** Empty, or a sentence naming the members whose search for example paths was cut short (their reachable cells may
   * have no path). */
  readonly pathsCut: string;
}

/** One header class's path from a member to another. */
export interface RouteData {
  /** The class, as `strata analyze --from --to` names it. */
  readonly header: string;
  readonly path: string;
  readonly steps: readonly StepData[];
}

export interface PropertyData {
  readonly name: string;
  readonly holds: boolean;
  readonly note?: string;
  readonly counterexamples: readonly string[];
  readonly more: number;
}

export interface FindingData {
  readonly kind: "loop" | "black hole";
  readonly component: string;
  readonly header: string;
  readonly at: string;
  /** The path as `strata analyze` prints it: "lan.h1 forward row 0 → lan.h1.1-r.1 → …". */
  readonly path: string;
  /** The path's steps: a row's member, a link (with its sender), or the miss that drops the class (step "drop"). */
  readonly steps: readonly StepData[];
}
