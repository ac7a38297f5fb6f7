// An independent Foxglove WebSocket client for kairos's bridge tests: @foxglove/ws-protocol's
// FoxgloveClient on the `ws` package, decoding CDR payloads with @foxglove/rosmsg2-serialization
// from the ros2msg schema text the bridge advertises (parsed by @foxglove/rosmsg). Nothing here
// comes from kairos.
//
// node client.mjs URL [options]; one JSON object per line on stdout for each event:
//   {"event":"serverInfo",...} {"event":"advertise",...} {"event":"message","topic":..,"data":..}
//   {"event":"status",...} {"event":"unadvertise",...} {"event":"published",...} {"event":"done",...}
//   ("done" has, per topic, the messages received and the first and last arrival in ms and
//   the payload bytes: what scripts/bench-foxglove reads)
// Options:
//   --subscribe TOPIC:N    subscribe when TOPIC is advertised; done once N messages decoded
//                          (N = 0: subscribe, and count without waiting for any)
//   --publish TOPIC:TYPE:JSON:TIMES  advertise TOPIC (clientPublish) with TYPE, send JSON
//                          (serialized with the schema of TYPE, read from the interfaces
//                          directory in $KAIROS_INTERFACES) TIMES times, 20 per second
//   --call SERVICE:JSON    once SERVICE is advertised, call it with JSON (serialized with the
//                          request schema the bridge advertises); the response is decoded with
//                          its response schema: {"event":"serviceResponse",...} or
//                          {"event":"serviceFailure",...}. Repeatable: calls go in order, each
//                          after the answer to the one before
//   --param-get NAMES      ask for the parameters NAMES (comma-separated; empty: all)
//   --param-set NAME=JSON  set parameter NAME to JSON. Parameter requests go in the order
//                          given, each after the answer to the one before (all carry an id):
//                          {"event":"parameterValues","request":...,"parameters":[...]}
//   --param-subscribe NAMES  subscribe to updates of the parameters NAMES (comma-separated)
//                          at once; each update: {"event":"parameterUpdate","parameters":[...]}
//   --want-param-updates N done only once N updates arrived
//   --graph-want NAME      subscribe to the connection graph; each update:
//                          {"event":"graph",...}; done only once a topic or service NAME
//                          was in one
//   --stall SECONDS        once subscribed, stop reading the socket for SECONDS, then read again
//   --linger SECONDS       after the rest is done, keep reading SECONDS more
//   --want-time            done only once a server time message arrived
//   --quiet                do not print each message (counts only in "done")
//   --timeout SECONDS      give up (exit 1) after SECONDS; 60 by default
// The @foxglove packages are CommonJS: their exports come through the default import.
import wsProtocol from "@foxglove/ws-protocol";
import rosmsg from "@foxglove/rosmsg";
import serialization from "@foxglove/rosmsg2-serialization";
import WebSocket from "ws";
import fs from "node:fs";
import path from "node:path";

const { FoxgloveClient } = wsProtocol;
const { parse } = rosmsg;
const { MessageReader, MessageWriter } = serialization;

const argv = process.argv.slice(2);
const url = argv.shift();
const subscribe = new Map(); // topic -> wanted count
const publishes = [];
const calls = []; // {service, value, answered}
const paramOps = []; // {kind: "get", names} | {kind: "set", name, value}; answered
let paramSubscribe = [], wantParamUpdates = 0, paramUpdates = 0;
let graphWant = null, graphSeen = false;
let stall = 0, linger = 0, quiet = false, wantTime = false, timeout = 60;
while (argv.length) {
  const flag = argv.shift();
  if (flag === "--quiet") { quiet = true; continue; }
  if (flag === "--want-time") { wantTime = true; continue; }
  const value = argv.shift();
  if (flag === "--subscribe") {
    const i = value.lastIndexOf(":");
    subscribe.set(value.slice(0, i), Number(value.slice(i + 1)));
  } else if (flag === "--publish") {
    const [topic, type, ...rest] = value.split(":");
    const times = Number(rest.pop());
    publishes.push({ topic, type, value: JSON.parse(rest.join(":")), times });
  } else if (flag === "--call") {
    const i = value.indexOf(":");
    calls.push({ service: value.slice(0, i), value: JSON.parse(value.slice(i + 1)), answered: false });
  } else if (flag === "--param-get") {
    paramOps.push({ kind: "get", names: value ? value.split(",") : [], answered: false });
  } else if (flag === "--param-set") {
    const i = value.indexOf("=");
    paramOps.push({ kind: "set", name: value.slice(0, i), value: JSON.parse(value.slice(i + 1)), answered: false });
  } else if (flag === "--param-subscribe") paramSubscribe = value.split(",");
  else if (flag === "--want-param-updates") wantParamUpdates = Number(value);
  else if (flag === "--graph-want") graphWant = value;
  else if (flag === "--stall") stall = Number(value);
  else if (flag === "--linger") linger = Number(value);
  else if (flag === "--timeout") timeout = Number(value);
  else { console.error(`unknown option ${flag}`); process.exit(2); }
}

const say = (o) => process.stdout.write(JSON.stringify(o, (_, v) =>
  typeof v === "bigint" ? v.toString() : ArrayBuffer.isView(v) ? Array.from(v) : v) + "\n");

// The definition of a type and those it refers to, in the ros2msg layout, from .msg files.
function definitionText(type, seen = new Set()) {
  const root = process.env.KAIROS_INTERFACES;
  const text = fs.readFileSync(path.join(root, `${type}.msg`), "utf8");
  let out = text;
  const pkg = type.split("/")[0];
  for (const line of text.split("\n")) {
    const field = line.replace(/#.*/, "").trim().split(/\s+/)[0];
    if (!field || line.includes("=")) continue;
    const base = field.replace(/\[.*\]$/, "").replace(/<=\d+$/, "");
    if (/^(bool|byte|char|float32|float64|u?int(8|16|32|64)|w?string)$/.test(base)) continue;
    const full = base.includes("/") ? base.replace("/", "/msg/") : `${pkg}/msg/${base}`;
    if (seen.has(full)) continue;
    seen.add(full);
    out += `\n${"=".repeat(80)}\nMSG: ${full.replace("/msg/", "/")}\n` + definitionText(full, seen);
  }
  return out;
}

const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
const client = new FoxgloveClient({ ws });
const channels = new Map(); // channel id -> {topic, reader}
const subscriptions = new Map(); // subscription id -> channel id
const received = new Map(); // topic -> count
const spans = new Map(); // topic -> [first, last] arrival (ms, performance.now()), and bytes

const statuses = [];
const subscribedTopics = new Set();
let stalled = false, finished = false, lingering = false, timeSeen = false;

function finish(ok, why) {
  if (finished) return;
  finished = true;
  say({ event: "done", ok, why, received: Object.fromEntries(received), spans: Object.fromEntries(spans), statuses });
  client.close();
  setTimeout(() => process.exit(ok ? 0 : 1), 100);
}
setTimeout(() => finish(false, `timeout after ${timeout} s`), timeout * 1000);

function check() {
  if (stalled || finished || lingering) return;
  for (const [topic, want] of subscribe) {
    if (!subscribedTopics.has(topic) || (received.get(topic) ?? 0) < want) return;
  }
  if (publishes.some((p) => !p.done)) return;
  if (calls.some((c) => !c.answered)) return;
  if (paramOps.some((o) => !o.answered)) return;
  if (paramUpdates < wantParamUpdates) return;
  if (graphWant !== null && !graphSeen) return;
  if (wantTime && !timeSeen) return;
  if (linger > 0) {
    lingering = true;
    setTimeout(() => finish(true, "all seen"), linger * 1000);
  } else finish(true, "all seen");
}

client.on("error", (e) => say({ event: "error", message: String(e) }));
client.on("close", () => finish(false, "the server closed the connection"));
client.on("serverInfo", (info) => {
  say({ event: "serverInfo", name: info.name, capabilities: info.capabilities, supportedEncodings: info.supportedEncodings });
  for (const p of publishes) {
    const id = client.advertise({ topic: p.topic, encoding: "cdr", schemaName: p.type });
    const writer = new MessageWriter(parse(definitionText(p.type), { ros2: true }));
    let sent = 0;
    const timer = setInterval(() => {
      client.sendMessage(id, writer.writeMessage(p.value));
      sent += 1;
      if (sent >= p.times) {
        clearInterval(timer);
        p.done = true;
        say({ event: "published", topic: p.topic, count: sent });
        check();
      }
    }, 50);
  }
  if (paramSubscribe.length) client.subscribeParameterUpdates(paramSubscribe);
  if (graphWant !== null) client.subscribeConnectionGraph();
  nextParamOp();
  check();
});
client.on("status", (s) => { statuses.push(s); say({ event: "status", level: s.level, message: s.message, id: s.id }); });
client.on("time", (t) => { timeSeen = true; say({ event: "time", timestamp: t.timestamp }); check(); });
client.on("unadvertise", (ids) => {
  for (const id of ids) { say({ event: "unadvertise", topic: channels.get(id)?.topic }); channels.delete(id); }
});
client.on("advertise", (list) => {
  for (const c of list) {
    say({ event: "advertise", id: c.id, topic: c.topic, encoding: c.encoding, schemaName: c.schemaName, schemaEncoding: c.schemaEncoding, schema: c.schema });
    let reader = null;
    if (c.schemaEncoding === "ros2msg" && c.schema.length > 0) reader = new MessageReader(parse(c.schema, { ros2: true }));
    channels.set(c.id, { topic: c.topic, reader });
    if (subscribe.has(c.topic)) {
      subscriptions.set(client.subscribe(c.id), c.id);
      subscribedTopics.add(c.topic);
      say({ event: "subscribed", topic: c.topic });
      if (stall > 0 && !stalled) {
        stalled = true;
        ws._socket.pause();
        say({ event: "stalled", seconds: stall });
        setTimeout(() => { stalled = false; ws._socket.resume(); say({ event: "resumed" }); check(); }, stall * 1000);
      }
    }
  }
});
client.on("message", (m) => {
  const channel = channels.get(subscriptions.get(m.subscriptionId));
  if (!channel) return;
  received.set(channel.topic, (received.get(channel.topic) ?? 0) + 1);
  const now = performance.now();
  const span = spans.get(channel.topic) ?? { first: now, last: now, bytes: 0 };
  span.last = now;
  span.bytes += m.data.byteLength;
  spans.set(channel.topic, span);
  if (!quiet) {
    const bytes = new Uint8Array(m.data.buffer, m.data.byteOffset, m.data.byteLength);
    const data = channel.reader ? channel.reader.readMessage(bytes) : null;
    say({ event: "message", topic: channel.topic, timestamp: m.timestamp, data });
  }
  check();
});

// Services: advertised ones by name; the calls go out one at a time, in order.
const services = new Map(); // name -> {id, writer, reader}
let calling = null; // {callId, call}
let nextCallId = 1;
function callNext() {
  if (calling || finished) return;
  const call = calls.find((c) => !c.answered);
  const service = call && services.get(call.service);
  if (!service) return;
  const bytes = service.writer.writeMessage(call.value);
  calling = { callId: nextCallId++, call, service };
  client.sendServiceCallRequest({
    serviceId: service.id,
    callId: calling.callId,
    encoding: "cdr",
    data: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  });
  say({ event: "serviceCall", service: call.service, callId: calling.callId });
}
client.on("advertiseServices", (list) => {
  for (const s of list) {
    say({ event: "advertiseService", id: s.id, name: s.name, type: s.type, request: s.request, response: s.response });
    if (s.request?.schemaEncoding !== "ros2msg" || s.response?.schemaEncoding !== "ros2msg") continue;
    services.set(s.name, {
      id: s.id,
      writer: new MessageWriter(parse(s.request.schema, { ros2: true })),
      reader: new MessageReader(parse(s.response.schema, { ros2: true })),
    });
  }
  callNext();
});
client.on("unadvertiseServices", (ids) => say({ event: "unadvertiseServices", ids }));
function answered(event) {
  const { call } = calling;
  call.answered = true;
  calling = null;
  say({ service: call.service, ...event });
  callNext();
  check();
}
client.on("serviceCallResponse", (r) => {
  if (!calling || r.callId !== calling.callId) return;
  const bytes = new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength);
  answered({ event: "serviceResponse", encoding: r.encoding, data: calling.service.reader.readMessage(bytes) });
});
client.on("serviceCallFailure", (f) => {
  if (!calling || f.callId !== calling.callId) return;
  answered({ event: "serviceFailure", message: f.message });
});

// Parameter requests, one at a time, in order.
let paramOp = null;
function nextParamOp() {
  if (paramOp || finished) return;
  paramOp = paramOps.find((o) => !o.answered);
  if (!paramOp) return;
  const id = `p${paramOps.indexOf(paramOp)}`;
  if (paramOp.kind === "get") client.getParameters(paramOp.names, id);
  else client.setParameters([{ name: paramOp.name, value: paramOp.value }], id);
}
client.on("parameterValues", (event) => {
  if (event.id === undefined) {
    paramUpdates += 1;
    say({ event: "parameterUpdate", parameters: event.parameters });
    check();
    return;
  }
  if (!paramOp || event.id !== `p${paramOps.indexOf(paramOp)}`) return;
  const op = paramOp;
  op.answered = true;
  paramOp = null;
  say({ event: "parameterValues", request: op, parameters: event.parameters });
  nextParamOp();
  check();
});

client.on("connectionGraphUpdate", (update) => {
  say({ event: "graph", ...update });
  const names = [...update.publishedTopics, ...update.subscribedTopics, ...update.advertisedServices].map((e) => e.name);
  if (names.includes(graphWant)) graphSeen = true;
  check();
});
