#!/usr/bin/env python3
"""Where a client's time goes, from a packet capture of its NBD connection on loopback.

    tcpdump -i lo -w cap.pcap 'tcp port 10809'       (while the client runs)
    wire_times.py cap.pcap 10809 [client-mean-ms [model-mean-ms]]

Each NBD request header (client to server) and its reply (server to client) is found at the
start of a packet by its magic and matched by cookie (a client at queue depth 1). The time between the request's packet and its
reply's packet is what the server took, seen on the wire; what the client reports beyond that is
its own (building the request before the send, and waking up after the reply arrived):

    client-observed = client before the send + wire (server) + client after the reply
    wire (server)   = arrival delay (packet -> read by the server) + model response + lateness

Prints the wire mean and its distribution, and, given the client's and the model's means, the
split between the client and the server.
"""
import struct
import sys

REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698
STRUCTURED_REPLY_MAGIC = 0x668E33EF


def packets(path):
    """(time s, source port, destination port, TCP payload) of each IPv4 TCP packet."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic == 0xA1B2C3D4:
        endian, scale = "<", 1e-6
    elif magic == 0xA1B23C4D:
        endian, scale = "<", 1e-9
    else:
        sys.exit(f"{path}: not a little-endian pcap file (magic {magic:#x})")
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    # 1: Ethernet (14-byte header); 0/12/101: raw or null loopback.
    link = {1: 14, 0: 4, 12: 0, 101: 0, 113: 16}.get(linktype)
    if link is None:
        sys.exit(f"{path}: link type {linktype} not handled")
    at = 24
    while at + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(endian + "IIII", data[at:at + 16])
        frame = data[at + 16:at + 16 + incl]
        at += 16 + incl
        ip = frame[link:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:total]
        if len(tcp) < 20:
            continue
        sport, dport = struct.unpack(">HH", tcp[:4])
        off = (tcp[12] >> 4) * 4
        yield sec + frac * scale, sport, dport, tcp[off:]


def wire_times(path, port):
    """Per request: (request packet time, reply packet time), in the order the replies came.

    A packet is taken to begin with a message header when it begins with a magic number: true
    of a client at queue depth 1 (every request and every reply its own packet), which is what
    this is for; the capture may keep only each packet's first bytes (tcpdump -s 96).
    """
    sent = {}
    done = []
    for t, sport, dport, payload in packets(path):
        if len(payload) < 16:
            continue
        magic = struct.unpack(">I", payload[:4])[0]
        if dport == port and magic == REQUEST_MAGIC and len(payload) >= 28:
            cookie = struct.unpack(">Q", payload[8:16])[0]
            sent[cookie] = t
        elif sport == port and magic == SIMPLE_REPLY_MAGIC:
            cookie = struct.unpack(">Q", payload[8:16])[0]
            if cookie in sent:
                done.append((sent.pop(cookie), t))
        elif sport == port and magic == STRUCTURED_REPLY_MAGIC:
            cookie = struct.unpack(">Q", payload[8:16])[0]
            if cookie in sent:
                done.append((sent.pop(cookie), t))
    return done


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    times = wire_times(sys.argv[1], int(sys.argv[2]))
    if not times:
        sys.exit(f"{sys.argv[1]}: no NBD request with its reply found on port {sys.argv[2]}")
    wire = sorted((b - a) * 1e3 for a, b in times)
    mean = sum(wire) / len(wire)
    print("wire (request packet -> reply packet): %d requests, mean %.3f ms, p50 %.3f ms, p99 %.3f ms"
          % (len(wire), mean, wire[len(wire) // 2], wire[min(len(wire) - 1, len(wire) * 99 // 100)]))
    if len(sys.argv) >= 5:
        client, model = float(sys.argv[3]), float(sys.argv[4])
        print("  server beyond the model (arrival delay + lateness + its write): %.3f ms (%+.2f%% of the model)"
              % (mean - model, (mean - model) / model * 100))
        print("  client beyond the wire (its own send and wake-up):              %.3f ms (%+.2f%% of the model)"
              % (client - mean, (client - mean) / model * 100))
    elif len(sys.argv) == 4:
        client = float(sys.argv[3])
        print("  client beyond the wire (its own send and wake-up): %.3f ms" % (client - mean))


if __name__ == "__main__":
    main()
