// cclab-ns3: runs a cclab scenario in ns-3 (3.44) so that the two simulators can
// be compared on identical inputs. The harness (bench/ns3/ns3run.py) resolves a
// cclab scenario into the plain-text input below, with every flow listed
// explicitly (start time, size), and reads back tables in the same columns as
// cclab's `flows` and `links` tables.
//
// Input (one record per line, '#' starts a comment):
//   duration S | warmup S | seed N
//   mss B | initial_window SEGMENTS | min_rto S | initial_rto S
//   rcv_buf B | snd_buf B | delayed_ack 0|1 | delayed_ack_timeout S
//   dupack_threshold N | timestamps 0|1 | limited_transmit 0|1 | sack 0|1 | ecn 0|1
//   recovery classic|prr                       (default classic)
//   mtu B                                      (largest IP packet: every device's MTU,
//                                               at least 1500, so nothing is fragmented)
//   node NAME                                  (indices in order of appearance)
//   link NAME A B RATE_BPS DELAY_S LIMIT_PKTS LIMIT_BYTES   (full duplex, 0 = no limit)
//   red MAX_SIZE_PKTS MIN_TH MAX_TH L_INTERM QW MEAN_PKT_BYTES GENTLE WAIT USE_ECN HARD_DROP
//                                              (the link above is RED in both directions:
//                                               RedQueueDisc's attributes, in packets)
//   class NAME [PROTOCOL [ATTRIBUTE=VALUE ...]]
//        PROTOCOL: newreno (the default), ledbat, tcp_lp or vegas, run by ns-3's
//        TcpNewReno, TcpLedbat, TcpLp or TcpVegas; each ATTRIBUTE=VALUE sets an
//        attribute of that class (e.g. TargetDelay=25ms, Alpha=2), as ns-3 parses
//        it from a string. Indices in order of appearance.
//   flow CLASS SRC DST START_S SIZE_BYTES      (SIZE -1: long-lived; sorted by start)
//
// The TCP parameters are shared by every class: ns-3's TcpSocketBase with the
// scenario's SACK, timestamps and limited transmit (RFC 3042), classic recovery
// (RFC 6582 without SACK, RFC 6675 with it) or PRR (RFC 6937), and cclab's MSS,
// initial window, minimum RTO, delayed-ACK rule and windows. Each sender socket
// gets its class's congestion control (TcpSocketBase::SetCongestionControlAlgorithm
// before it connects); NewReno classes keep the socket's default, TcpNewReno.
// Every link is a point-to-point link whose device queue is a DropTail
// queue of the scenario's limit; the traffic-control layer's default queue disc is
// removed so that the device queue is the only queue (a full device queue then
// makes the traffic-control layer drop, which is counted below as
// offered - transmitted - still queued). A `red` link instead has ns-3's
// RedQueueDisc as its root queue disc with the record's attributes (the harness
// lowers cclab's limit and thresholds by the device's packet; LinkBandwidth and
// LinkDelay are the link's) in front of a device queue of one packet ("1p"), so
// that RED holds the backlog. ecn 1: TcpSocketBase::UseEcn On.
//
// Per link direction the links table also reports RED's marks (the queue disc's
// Mark trace) and the time-averaged number of packets waiting (queue disc + device
// queue, not the one in transmission: cclab's mean_queue_packets), both over
// [warmup, duration].
//
// Output in --out DIR: flows.csv, links.csv and perf.json.
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

struct LinkSpec
{
    std::string name;
    uint32_t a, b;
    double rateBps, delayS;
    uint64_t limitPkts, limitBytes;
    // RED (`red` record): thresholds in packets.
    bool red = false;
    uint64_t maxSize = 0;
    double minTh = 0, maxTh = 0, lInterm = 0, qw = 0;
    uint32_t meanPkt = 0;
    bool gentle = true, wait = true, useEcn = false, hardDrop = true;
};

struct FlowSpec
{
    uint32_t cls, src, dst;
    double start;
    int64_t size; // -1: long-lived
};

struct FlowState
{
    Ptr<Socket> snd;
    uint64_t written = 0;
    uint64_t rx = 0;
    double finish = NAN;
    uint32_t retransmissions = 0;
    uint32_t timeouts = 0;
    bool anySent = false;
    SequenceNumber32 highTx{0};
    // Duplicate ACKs in a row at the sender (for the recovery-entry census).
    bool anyAck = false;
    SequenceNumber32 lastAck{0};
    uint32_t dupRun = 0;
};

// Fast recoveries entered, and how many of them on fewer duplicate ACKs than the
// threshold (ns-3 applies RFC 6675's IsLost rule to its emulated Reno scoreboard).
uint64_t recoveries = 0, earlyRecoveries = 0;

struct LinkCounters
{
    uint64_t offered = 0, txPackets = 0, txBytes = 0;
    uint64_t offeredW = 0, txPacketsW = 0, txBytesW = 0, queuedW = 0;
    uint64_t marks = 0, marksW = 0;
    Ptr<Queue<Packet>> queue;
    Ptr<QueueDisc> qdisc; // RED links only
    // Packets waiting (queue disc + device queue) and their time integral after warm-up.
    int64_t waiting = 0;
    double since = 0, area = 0;

    uint64_t Queued() const
    {
        return queue->GetNPackets() + (qdisc ? qdisc->GetNPackets() : 0);
    }
};

struct Params
{
    double duration = 0, warmup = 0;
    uint64_t seed = 1;
    uint32_t mss = 1460, iw = 10, dupack = 3;
    double minRto = 0.2, initialRto = 1.0, delAckTimeout = 0.2;
    uint64_t rcvBuf = 131072, sndBuf = 524288;
    uint32_t mtu = 1500;
    bool delayedAck = false, timestamps = false, limitedTransmit = true, sack = false, ecn = false;
    bool prr = false; // recovery prr: TcpPrrRecovery; otherwise TcpClassicRecovery
};

// A traffic class: its name and the congestion control of its senders (null:
// the socket's default, TcpNewReno).
struct ClassSpec
{
    std::string name;
    std::string protocol;
    bool custom = false;
    ObjectFactory congestion;
};

Params P;
std::vector<std::string> nodeNames;
std::vector<ClassSpec> classes;
std::vector<LinkSpec> linkSpecs;
std::vector<FlowSpec> flowSpecs;
std::vector<FlowState> flows;
// One counter set per direction of each link: index 2*link (a->b) and 2*link+1 (b->a).
std::vector<LinkCounters> dirs;
std::map<std::pair<uint32_t, uint16_t>, uint32_t> flowByPeer; // (src address, src port) -> flow
NodeContainer nodes;
std::vector<Ipv4Address> nodeAddr;
const uint16_t kPort = 5000;
const uint32_t kChunk = 1 << 16;

[[noreturn]] void
Fail(const std::string& msg)
{
    std::cerr << "cclab-ns3: " << msg << std::endl;
    std::exit(2);
}

// ns-3's congestion-control class for each protocol cclab can hand over.
const std::map<std::string, std::string> kCongestion = {{"newreno", "ns3::TcpNewReno"},
                                                        {"ledbat", "ns3::TcpLedbat"},
                                                        {"tcp_lp", "ns3::TcpLp"},
                                                        {"vegas", "ns3::TcpVegas"}};

// The protocol of a `class` record and its ATTRIBUTE=VALUE pairs: a factory for the
// senders' congestion control, every attribute checked against the class's TypeId.
bool
ReadCongestion(ClassSpec& c, std::istringstream& s, const std::string& where)
{
    auto it = kCongestion.find(c.protocol);
    if (it == kCongestion.end())
    {
        Fail(where + ": protocol " + c.protocol + " has no ns-3 counterpart here");
    }
    TypeId tid = TypeId::LookupByName(it->second);
    c.congestion.SetTypeId(tid);
    std::string kv;
    while (s >> kv)
    {
        auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
        {
            return false;
        }
        std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
        TypeId::AttributeInformation info;
        if (!tid.LookupAttributeByName(name, &info))
        {
            Fail(where + ": " + it->second + " has no attribute " + name);
        }
        if (!info.checker->CreateValidValue(StringValue(value)))
        {
            Fail(where + ": " + it->second + "::" + name + " cannot be " + value);
        }
        c.congestion.Set(name, StringValue(value));
        c.custom = true;
    }
    c.custom = c.custom || c.protocol != "newreno";
    return true;
}

void
ReadInput(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        Fail("cannot read " + path);
    }
    std::string line;
    int lineNo = 0;
    while (std::getline(in, line))
    {
        ++lineNo;
        auto hash = line.find('#');
        if (hash != std::string::npos)
        {
            line.resize(hash);
        }
        std::istringstream s(line);
        std::string key;
        if (!(s >> key))
        {
            continue;
        }
        bool ok = true;
        if (key == "duration")
            ok = bool(s >> P.duration);
        else if (key == "warmup")
            ok = bool(s >> P.warmup);
        else if (key == "seed")
            ok = bool(s >> P.seed);
        else if (key == "mss")
            ok = bool(s >> P.mss);
        else if (key == "initial_window")
            ok = bool(s >> P.iw);
        else if (key == "min_rto")
            ok = bool(s >> P.minRto);
        else if (key == "initial_rto")
            ok = bool(s >> P.initialRto);
        else if (key == "rcv_buf")
            ok = bool(s >> P.rcvBuf);
        else if (key == "snd_buf")
            ok = bool(s >> P.sndBuf);
        else if (key == "delayed_ack")
            ok = bool(s >> P.delayedAck);
        else if (key == "delayed_ack_timeout")
            ok = bool(s >> P.delAckTimeout);
        else if (key == "dupack_threshold")
            ok = bool(s >> P.dupack);
        else if (key == "timestamps")
            ok = bool(s >> P.timestamps);
        else if (key == "limited_transmit")
            ok = bool(s >> P.limitedTransmit);
        else if (key == "sack")
            ok = bool(s >> P.sack);
        else if (key == "ecn")
            ok = bool(s >> P.ecn);
        else if (key == "mtu")
            ok = bool(s >> P.mtu) && P.mtu <= 65535;
        else if (key == "recovery")
        {
            std::string r;
            ok = bool(s >> r) && (r == "classic" || r == "prr");
            P.prr = r == "prr";
        }
        else if (key == "node")
        {
            std::string n;
            ok = bool(s >> n);
            nodeNames.push_back(n);
        }
        else if (key == "class")
        {
            ClassSpec c;
            ok = bool(s >> c.name);
            if (!(s >> c.protocol))
            {
                c.protocol = "newreno";
            }
            ok = ok && ReadCongestion(c, s, path + ":" + std::to_string(lineNo));
            classes.push_back(c);
        }
        else if (key == "link")
        {
            LinkSpec l;
            ok = bool(s >> l.name >> l.a >> l.b >> l.rateBps >> l.delayS >> l.limitPkts >>
                      l.limitBytes) &&
                 l.a < nodeNames.size() && l.b < nodeNames.size();
            linkSpecs.push_back(l);
        }
        else if (key == "red")
        {
            ok = !linkSpecs.empty() && !linkSpecs.back().red;
            if (ok)
            {
                LinkSpec& l = linkSpecs.back();
                ok = bool(s >> l.maxSize >> l.minTh >> l.maxTh >> l.lInterm >> l.qw >> l.meanPkt >>
                          l.gentle >> l.wait >> l.useEcn >> l.hardDrop) &&
                     l.maxSize > 0 && l.minTh >= 0 && l.maxTh > l.minTh && l.lInterm >= 1 &&
                     l.qw > 0 && l.qw <= 1 && l.meanPkt > 0;
                l.red = true;
            }
        }
        else if (key == "flow")
        {
            FlowSpec f;
            ok = bool(s >> f.cls >> f.src >> f.dst >> f.start >> f.size) &&
                 f.cls < classes.size() && f.src < nodeNames.size() &&
                 f.dst < nodeNames.size() &&
                 (flowSpecs.empty() || f.start >= flowSpecs.back().start);
            flowSpecs.push_back(f);
        }
        else
        {
            Fail(path + ":" + std::to_string(lineNo) + ": unknown key " + key);
        }
        if (!ok)
        {
            Fail(path + ":" + std::to_string(lineNo) + ": bad record: " + line);
        }
    }
    if (P.duration <= 0 || linkSpecs.empty())
    {
        Fail(path + ": needs a positive duration and at least one link");
    }
}

// --- receiver side -----------------------------------------------------------------

void
OnRead(uint32_t id, Ptr<Socket> sock)
{
    FlowState& f = flows[id];
    while (Ptr<Packet> p = sock->Recv())
    {
        f.rx += p->GetSize();
    }
    const FlowSpec& spec = flowSpecs[id];
    if (spec.size >= 0 && std::isnan(f.finish) && f.rx >= uint64_t(spec.size))
    {
        f.finish = Simulator::Now().GetSeconds();
    }
}

void
OnAccept(Ptr<Socket> sock, const Address& from)
{
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
    auto it = flowByPeer.find({peer.GetIpv4().Get(), peer.GetPort()});
    if (it == flowByPeer.end())
    {
        Fail("connection from an unknown peer");
    }
    sock->SetRecvCallback(MakeBoundCallback(&OnRead, it->second));
    flowByPeer.erase(it); // the port may be reused by a later flow
}

// --- sender side -------------------------------------------------------------------

void
FillBuffer(uint32_t id, Ptr<Socket> sock, uint32_t /*available*/)
{
    FlowState& f = flows[id];
    const FlowSpec& spec = flowSpecs[id];
    uint64_t total = spec.size < 0 ? UINT64_MAX : uint64_t(spec.size);
    while (f.written < total)
    {
        uint64_t room = sock->GetTxAvailable();
        if (room == 0)
        {
            return;
        }
        uint32_t n = uint32_t(std::min<uint64_t>({room, total - f.written, kChunk}));
        int sent = sock->Send(Create<Packet>(n));
        if (sent <= 0)
        {
            return;
        }
        f.written += uint64_t(sent);
    }
    if (spec.size >= 0)
    {
        sock->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
        sock->Close(); // FIN after the data
    }
}

void
OnConnected(uint32_t id, Ptr<Socket> sock)
{
    FillBuffer(id, sock, 0);
}

void
OnConnectFailed(uint32_t id, Ptr<Socket>)
{
    std::cerr << "cclab-ns3: flow " << id << " failed to connect" << std::endl;
}

// A data segment leaves the sender: a retransmission if it starts below the highest
// sequence number already sent.
void
OnTx(uint32_t id, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
    {
        return;
    }
    FlowState& f = flows[id];
    SequenceNumber32 end = h.GetSequenceNumber() + p->GetSize();
    if (f.anySent && h.GetSequenceNumber() < f.highTx)
    {
        f.retransmissions++;
    }
    if (!f.anySent || end > f.highTx)
    {
        f.highTx = end;
    }
    f.anySent = true;
}

// Every entry into the Loss state is a retransmission timeout.
void
OnCongState(uint32_t id, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS)
    {
        flows[id].timeouts++;
    }
    else if (now == TcpSocketState::CA_RECOVERY)
    {
        recoveries++;
        if (flows[id].dupRun < P.dupack)
        {
            earlyRecoveries++;
        }
    }
}

// A segment reaches the sender (traced before it is processed): count duplicate ACKs.
void
OnSenderRx(uint32_t id, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (!(h.GetFlags() & TcpHeader::ACK) || p->GetSize() > 0)
    {
        return;
    }
    FlowState& f = flows[id];
    if (f.anyAck && h.GetAckNumber() == f.lastAck)
    {
        f.dupRun++;
    }
    else
    {
        f.dupRun = 0;
        f.lastAck = h.GetAckNumber();
        f.anyAck = true;
    }
}

void
StartFlow(uint32_t id)
{
    const FlowSpec& spec = flowSpecs[id];
    Ptr<Socket> sock = Socket::CreateSocket(nodes.Get(spec.src), TcpSocketFactory::GetTypeId());
    ClassSpec& cls = classes[spec.cls];
    if (cls.custom)
    {
        DynamicCast<TcpSocketBase>(sock)->SetCongestionControlAlgorithm(
            cls.congestion.Create<TcpCongestionOps>());
    }
    flows[id].snd = sock;
    sock->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, id));
    sock->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, id));
    sock->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSenderRx, id));
    sock->SetConnectCallback(MakeBoundCallback(&OnConnected, id),
                             MakeBoundCallback(&OnConnectFailed, id));
    sock->SetSendCallback(MakeBoundCallback(&FillBuffer, id));
    sock->Bind();
    sock->Connect(InetSocketAddress(nodeAddr[spec.dst], kPort));
    Address local;
    sock->GetSockName(local);
    InetSocketAddress me = InetSocketAddress::ConvertFrom(local);
    if (!flowByPeer.emplace(std::make_pair(me.GetIpv4().Get(), me.GetPort()), id).second)
    {
        Fail("two live flows share a source address and port");
    }
}

// --- link counters -----------------------------------------------------------------

void
OnIpTx(std::vector<uint32_t>* ifaceToDir, Ptr<const Packet>, Ptr<Ipv4>, uint32_t iface)
{
    uint32_t d = (*ifaceToDir)[iface];
    if (d != UINT32_MAX)
    {
        dirs[d].offered++;
    }
}

// The packets waiting at a direction change (queue disc or device queue): add the
// time since the last change, clipped to [warmup, duration], to the integral.
void
Integrate(LinkCounters& c)
{
    double now = std::min(Simulator::Now().GetSeconds(), P.duration);
    double from = std::max(c.since, P.warmup);
    if (now > from)
    {
        c.area += double(c.waiting) * (now - from);
    }
    c.since = now;
}

void
OnQueueLength(uint32_t d, uint32_t before, uint32_t after)
{
    Integrate(dirs[d]);
    dirs[d].waiting += int64_t(after) - int64_t(before);
}

void
OnMark(uint32_t d, Ptr<const QueueDiscItem>, const char*)
{
    dirs[d].marks++;
}

void
OnPhyTxBegin(uint32_t d, Ptr<const Packet> p)
{
    dirs[d].txPackets++;
    dirs[d].txBytes += p->GetSize() - 2; // without the 2-byte PPP header
}

void
SnapshotWarmup()
{
    for (auto& c : dirs)
    {
        c.offeredW = c.offered;
        c.txPacketsW = c.txPackets;
        c.txBytesW = c.txBytes;
        c.queuedW = c.Queued();
        c.marksW = c.marks;
    }
}

void
Progress(double every)
{
    std::cerr << "\rcclab-ns3: " << Simulator::Now().GetSeconds() << " / " << P.duration << " s"
              << std::flush;
    if (Simulator::Now().GetSeconds() + every <= P.duration)
    {
        Simulator::Schedule(Seconds(every), &Progress, every);
    }
}

std::string
Num(double x)
{
    if (std::isnan(x))
    {
        return "nan";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9f", x);
    return buf;
}

} // namespace

int
main(int argc, char** argv)
{
    std::string input, out = ".";
    bool progress = false;
    CommandLine cmd;
    cmd.AddValue("input", "scenario file written by the cclab harness", input);
    cmd.AddValue("out", "output directory", out);
    cmd.AddValue("progress", "print simulated time now and then", progress);
    cmd.Parse(argc, argv);
    if (input.empty())
    {
        Fail("--input=FILE is required");
    }
    auto t0 = std::chrono::steady_clock::now();
    ReadInput(input);
    RngSeedManager::SetSeed(uint32_t(P.seed % 4294967295ULL) + 1);

    // TCP: NewReno unless a class says otherwise (per socket, in StartFlow); classic
    // recovery or PRR as the scenario's tcp.recovery says.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(P.prr ? TcpPrrRecovery::GetTypeId()
                                         : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(P.mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(P.iw));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(P.delayedAck ? 2 : 1));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(P.delAckTimeout)));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(P.rcvBuf));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(P.sndBuf));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(P.initialRto)));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(100));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(100));
    // SACK and timestamps as the scenario's tcp.sack and tcp.timestamps.
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(P.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(P.timestamps));
    // RFC 3168 on every connection (both ends: the receivers fork from listeners).
    Config::SetDefault("ns3::TcpSocketBase::UseEcn",
                       EnumValue(P.ecn ? TcpSocketState::On : TcpSocketState::Off));
    // RFC 3042. ns-3 3.44 cannot run without SACK and without limited transmit: an application write in the Disorder state trips an assertion in
    // TcpSocketBase::SendPendingData; cclab models limited transmit instead.
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(P.limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(P.minRto)));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(P.dupack));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(P.initialRto)));

    nodes.Create(nodeNames.size());
    InternetStackHelper internet;
    internet.Install(nodes);
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    std::vector<std::vector<uint32_t>> ifaceToDir(nodeNames.size());
    nodeAddr.assign(nodeNames.size(), Ipv4Address());
    std::vector<bool> hasAddr(nodeNames.size(), false);
    TrafficControlHelper tch;
    for (size_t i = 0; i < linkSpecs.size(); ++i)
    {
        const LinkSpec& l = linkSpecs[i];
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(l.rateBps))));
        // A data segment with the timestamp option (1460 + 20 + 32 bytes) exceeds the
        // default 1500-byte MTU, and IPv4 would send it as two fragments; cclab's
        // packets are never fragmented.
        p2p.SetDeviceAttribute("Mtu", UintegerValue(std::max<uint32_t>(P.mtu, 1500)));
        p2p.SetChannelAttribute("Delay", TimeValue(Seconds(l.delayS)));
        QueueSize limit = l.limitPkts ? QueueSize(QueueSizeUnit::PACKETS, l.limitPkts)
                          : l.limitBytes ? QueueSize(QueueSizeUnit::BYTES, l.limitBytes)
                                         : QueueSize(QueueSizeUnit::PACKETS, 1u << 30);
        p2p.SetQueue("ns3::DropTailQueue<Packet>",
                     "MaxSize",
                     QueueSizeValue(l.red ? QueueSize("1p") : limit));
        TrafficControlHelper red;
        if (l.red)
        {
            red.SetRootQueueDisc("ns3::RedQueueDisc",
                                 "MaxSize",
                                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, l.maxSize)),
                                 "MinTh",
                                 DoubleValue(l.minTh),
                                 "MaxTh",
                                 DoubleValue(l.maxTh),
                                 "LInterm",
                                 DoubleValue(l.lInterm),
                                 "QW",
                                 DoubleValue(l.qw),
                                 "MeanPktSize",
                                 UintegerValue(l.meanPkt),
                                 "Gentle",
                                 BooleanValue(l.gentle),
                                 "Wait",
                                 BooleanValue(l.wait),
                                 "UseEcn",
                                 BooleanValue(l.useEcn),
                                 "UseHardDrop",
                                 BooleanValue(l.hardDrop),
                                 "LinkBandwidth",
                                 DataRateValue(DataRate(uint64_t(l.rateBps))),
                                 "LinkDelay",
                                 TimeValue(Seconds(l.delayS)));
        }
        NetDeviceContainer devs = p2p.Install(nodes.Get(l.a), nodes.Get(l.b));
        Ipv4InterfaceContainer ifs = addr.Assign(devs);
        addr.NewNetwork();
        for (uint32_t k = 0; k < 2; ++k)
        {
            Ptr<NetDevice> dev = devs.Get(k);
            Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
            if (tc->GetRootQueueDiscOnDevice(dev))
            {
                tch.Uninstall(dev);
            }
            uint32_t d = uint32_t(2 * i + k);
            LinkCounters c;
            c.queue = DynamicCast<PointToPointNetDevice>(dev)->GetQueue();
            c.queue->TraceConnectWithoutContext("PacketsInQueue",
                                                MakeBoundCallback(&OnQueueLength, d));
            if (l.red)
            {
                c.qdisc = red.Install(dev).Get(0);
                c.qdisc->TraceConnectWithoutContext("PacketsInQueue",
                                                    MakeBoundCallback(&OnQueueLength, d));
                c.qdisc->TraceConnectWithoutContext("Mark", MakeBoundCallback(&OnMark, d));
            }
            dirs.push_back(c);
            dev->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&OnPhyTxBegin, d));
            uint32_t node = k == 0 ? l.a : l.b;
            Ptr<Ipv4> ip = nodes.Get(node)->GetObject<Ipv4>();
            uint32_t iface = ip->GetInterfaceForDevice(dev);
            auto& map = ifaceToDir[node];
            if (map.size() <= iface)
            {
                map.resize(iface + 1, UINT32_MAX);
            }
            map[iface] = d;
            if (!hasAddr[node])
            {
                nodeAddr[node] = ifs.GetAddress(k);
                hasAddr[node] = true;
            }
        }
    }
    for (uint32_t n = 0; n < nodeNames.size(); ++n)
    {
        Ptr<Ipv4L3Protocol> ip = nodes.Get(n)->GetObject<Ipv4L3Protocol>();
        ip->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnIpTx, &ifaceToDir[n]));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // One listening socket per destination node.
    std::vector<bool> listening(nodeNames.size(), false);
    for (const FlowSpec& f : flowSpecs)
    {
        if (!listening[f.dst])
        {
            Ptr<Socket> l = Socket::CreateSocket(nodes.Get(f.dst), TcpSocketFactory::GetTypeId());
            l->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
            l->Listen();
            l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                 MakeCallback(&OnAccept));
            listening[f.dst] = true;
        }
    }
    flows.resize(flowSpecs.size());
    for (uint32_t id = 0; id < flowSpecs.size(); ++id)
    {
        if (flowSpecs[id].start < P.duration)
        {
            Simulator::Schedule(Seconds(flowSpecs[id].start), &StartFlow, id);
        }
    }
    Simulator::Schedule(Seconds(P.warmup), &SnapshotWarmup);
    if (progress)
    {
        Simulator::Schedule(Seconds(0), &Progress, std::max(1.0, P.duration / 20));
    }
    Simulator::Stop(Seconds(P.duration));
    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t2 = std::chrono::steady_clock::now();
    if (progress)
    {
        std::cerr << std::endl;
    }
    uint64_t events = Simulator::GetEventCount();

    std::ofstream fo(out + "/flows.csv");
    fo << "class,id,size,arrival,finish,completion_time,bytes_delivered,retransmissions,"
          "timeouts,finished,warmup\n";
    for (uint32_t id = 0; id < flowSpecs.size(); ++id)
    {
        const FlowSpec& s = flowSpecs[id];
        if (s.start >= P.duration)
        {
            continue;
        }
        const FlowState& f = flows[id];
        bool finished = !std::isnan(f.finish);
        uint64_t delivered = s.size < 0 ? f.rx : std::min<uint64_t>(f.rx, uint64_t(s.size));
        fo << classes[s.cls].name << ',' << id << ','
           << (s.size < 0 ? std::string("nan") : std::to_string(s.size)) << ',' << Num(s.start)
           << ',' << Num(f.finish) << ',' << Num(finished ? f.finish - s.start : NAN) << ','
           << delivered << ',' << f.retransmissions << ',' << f.timeouts << ','
           << (finished ? "true" : "false") << ',' << (s.start < P.warmup ? "true" : "false")
           << '\n';
    }
    std::ofstream lo(out + "/links.csv");
    lo << "name,from,to,rate_bps,delay_s,packets_sent,bytes_sent,drops,drop_rate,marks,utilization,"
          "mean_queue_packets\n";
    double span = P.duration - P.warmup;
    for (size_t i = 0; i < linkSpecs.size(); ++i)
    {
        for (uint32_t k = 0; k < 2; ++k)
        {
            const LinkSpec& l = linkSpecs[i];
            LinkCounters& c = dirs[2 * i + k];
            Integrate(c);
            uint64_t queued = c.Queued();
            uint64_t offered = c.offered - c.offeredW;
            uint64_t sent = c.txPackets - c.txPacketsW;
            int64_t drops = int64_t(offered) - int64_t(sent) - (int64_t(queued) - int64_t(c.queuedW));
            double bytes = double(c.txBytes - c.txBytesW);
            lo << (k == 0 ? l.name : l.name + "-rev") << ','
               << nodeNames[k == 0 ? l.a : l.b] << ',' << nodeNames[k == 0 ? l.b : l.a] << ','
               << Num(l.rateBps) << ',' << Num(l.delayS) << ',' << sent << ','
               << (c.txBytes - c.txBytesW) << ',' << drops << ','
               << Num(offered ? double(drops) / double(offered) : 0.0) << ','
               << (c.marks - c.marksW) << ','
               << Num(span > 0 ? bytes * 8 / (l.rateBps * span) : NAN) << ','
               << Num(span > 0 ? c.area / span : NAN) << '\n';
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    std::ofstream po(out + "/perf.json");
    double setup = std::chrono::duration<double>(t1 - t0).count();
    double wall = std::chrono::duration<double>(t2 - t1).count();
    po << "{\"simulator\": \"ns-3 " << "3.44" << "\", \"setup_s\": " << setup
       << ", \"wall_s\": " << wall << ", \"events\": " << events
       << ", \"simulated_s\": " << P.duration << ", \"peak_rss_kb\": " << ru.ru_maxrss
       << ", \"flows\": " << flows.size() << ", \"recoveries\": " << recoveries
       << ", \"recoveries_before_dupack_threshold\": " << earlyRecoveries << "}\n";
    Simulator::Destroy();
    return 0;
}
