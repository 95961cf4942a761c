# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Header constants, stream layouts and the Python models shared by the UDP/IPv4 cores and tests.

Everything the gateware builds at elaboration (the static header bytes, the checksum base) is
computed here once, so the cores, the tests and the host tool agree on a single definition.
"""

import ipaddress
from dataclasses import dataclass, asdict

from litex.soc.interconnect import stream

# Sizes --------------------------------------------------------------------------------------------

ETH_HEADER_LEN   = 14
IPV4_HEADER_LEN  = 20
UDP_HEADER_LEN   = 8
HEADER_LEN       = ETH_HEADER_LEN + IPV4_HEADER_LEN + UDP_HEADER_LEN # 42 bytes before the payload.
ARP_PACKET_LEN   = 28

DEFAULT_MTU      = 1500
MIN_MTU          = 576   # RFC 791: every host must accept 576-byte datagrams.
MAX_MTU          = 1500  # The MAC and the receive buffer are sized for standard frames.

ETHERTYPE_IPV4   = 0x0800
ETHERTYPE_ARP    = 0x0806
IP_PROTO_UDP     = 17
IPV4_VERSION_IHL = 0x45   # Version 4, 5-word header (no options).
IPV4_FLAGS_DF    = 0x4000 # Don't Fragment: a constant Identification is then legal (RFC 6864).
IPV4_TTL         = 64

# Byte offsets of the fields that are not static, from the start of the Ethernet frame.
ETH_TYPE_OFFSET          = 12
IPV4_TOTAL_LENGTH_OFFSET = ETH_HEADER_LEN + 2
IPV4_CHECKSUM_OFFSET     = ETH_HEADER_LEN + 10
UDP_LENGTH_OFFSET        = ETH_HEADER_LEN + IPV4_HEADER_LEN + 4

# Addresses ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UDPAddresses:
    """The addresses and ports of the FPGA and of its host, with the defaults every board uses: the targets'
    --fpga-mac/--fpga-ip/--host-mac/--host-ip/--fpga-port/--host-port options, their BaseSoC `addresses`
    and the area reports all take them from here. The cores check each value (mac_to_int, ip_to_int,
    check_port)."""
    fpga_mac:  str = "10:e2:d5:00:00:01"
    fpga_ip:   str = "192.168.1.50"
    host_mac:  str = "10:e2:d5:00:00:02"
    host_ip:   str = "192.168.1.100"
    fpga_port: int = 1234
    host_port: int = 1234

    def as_kwargs(self):
        """The keyword arguments of UDPCore and UDPTransmitter (fpga_mac, fpga_ip, ..., host_port)."""
        return asdict(self)


UDP_DEFAULTS = UDPAddresses()

# Stream layouts -----------------------------------------------------------------------------------

# Payload stream of the transmitter sink and the receiver source: one byte per beat, the payload
# length (bytes) as a parameter valid with every beat. A zero-length payload is one beat with
# last=1 whose data is ignored, so every request has a beat that carries its length.
udp_payload_layout = stream.EndpointDescription(
    payload_layout = [("data", 8)],
    param_layout   = [("length", 16)],
)

# Raw Ethernet frames (destination MAC to end of payload) exchanged with LiteEth's MAC core.
def eth_raw_layout():
    from liteeth.common import eth_phy_description
    return eth_phy_description(8)

# Configuration checks -----------------------------------------------------------------------------

def mac_to_int(mac, name="mac"):
    """A MAC address given as an int or as "aa:bb:cc:dd:ee:ff", as an int; a clear error otherwise."""
    if isinstance(mac, str):
        parts = mac.replace("-", ":").split(":")
        if len(parts) != 6 or not all(len(p) in (1, 2) for p in parts):
            raise ValueError(f"{name} must look like 'aa:bb:cc:dd:ee:ff', not {mac!r}")
        try:
            mac = int("".join(p.zfill(2) for p in parts), 16)
        except ValueError:
            raise ValueError(f"{name} must look like 'aa:bb:cc:dd:ee:ff', not {mac!r}") from None
    if isinstance(mac, bool) or not isinstance(mac, int) or not 0 <= mac < 2**48:
        raise ValueError(f"{name} must be a 48-bit integer or 'aa:bb:cc:dd:ee:ff', not {mac!r}")
    if mac & (1 << 40):
        raise ValueError(f"{name} must be a unicast address (bit 0 of the first byte clear), not {mac:012x}")
    return mac


def ip_to_int(ip, name="ip"):
    """An IPv4 address given as an int or dotted quad, as an int; a clear error otherwise."""
    if isinstance(ip, str):
        try:
            ip = int(ipaddress.IPv4Address(ip))
        except ValueError:
            raise ValueError(f"{name} must be a dotted IPv4 address like '192.168.1.50', not {ip!r}") from None
    if isinstance(ip, bool) or not isinstance(ip, int) or not 0 <= ip < 2**32:
        raise ValueError(f"{name} must be a 32-bit integer or a dotted IPv4 address, not {ip!r}")
    first = ip >> 24
    if ip == 0 or first == 0 or first >= 224 or first == 127 or ip == 0xffffffff:
        raise ValueError(f"{name} must be a unicast IPv4 address, not {ipaddress.IPv4Address(ip)}")
    return ip


def check_port(port, name="port"):
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 0xffff:
        raise ValueError(f"{name} must be an integer in 1..65535, not {port!r}")
    return port


def max_payload_for_mtu(mtu):
    """Largest UDP payload in one unfragmented IPv4 datagram of `mtu` bytes."""
    if isinstance(mtu, bool) or not isinstance(mtu, int) or not MIN_MTU <= mtu <= MAX_MTU:
        raise ValueError(f"mtu must be an integer in {MIN_MTU}..{MAX_MTU}, not {mtu!r}")
    return mtu - IPV4_HEADER_LEN - UDP_HEADER_LEN


def check_max_payload(max_payload):
    """A transmitter's or receiver's `max_payload`: an integer from 0 to the largest payload at MAX_MTU."""
    limit = max_payload_for_mtu(MAX_MTU)
    if isinstance(max_payload, bool) or not isinstance(max_payload, int) or not 0 <= max_payload <= limit:
        raise ValueError(f"max_payload must be an integer in 0..{limit}, not {max_payload!r}")
    return max_payload

# Header model -------------------------------------------------------------------------------------

def _be(value, nbytes):
    return list(value.to_bytes(nbytes, "big"))


def static_header(src_mac, src_ip, dst_mac, dst_ip, src_port, dst_port):
    """The 42 header bytes with IPv4 Total Length, IPv4 checksum and UDP Length left at 0.

    UDP checksum stays 0 (RFC 768: no checksum), Identification 0 with DF set, TTL 64.
    """
    header  = _be(dst_mac, 6) + _be(src_mac, 6) + _be(ETHERTYPE_IPV4, 2)
    header += [IPV4_VERSION_IHL, 0x00] + _be(0, 2)           # Version/IHL, DSCP/ECN, Total Length.
    header += _be(0, 2) + _be(IPV4_FLAGS_DF, 2)              # Identification, Flags/Fragment Offset.
    header += [IPV4_TTL, IP_PROTO_UDP] + _be(0, 2)           # TTL, Protocol, Header Checksum.
    header += _be(src_ip, 4) + _be(dst_ip, 4)
    header += _be(src_port, 2) + _be(dst_port, 2) + _be(0, 2) + _be(0, 2)
    assert len(header) == HEADER_LEN
    return header


def ones_complement_sum(words):
    """RFC 1071 sum: 16-bit words added with end-around carry."""
    s = 0
    for w in words:
        s += w
        s = (s & 0xffff) + (s >> 16)
    return s


def ipv4_checksum_rfc1071(ip_header):
    """Reference IPv4 header checksum of a 20-byte header (its checksum field is ignored)."""
    words = [(ip_header[i] << 8) | ip_header[i + 1] for i in range(0, IPV4_HEADER_LEN, 2) if i != 10]
    return ~ones_complement_sum(words) & 0xffff


def ipv4_checksum_base(header):
    """Checksum of the static IPv4 header with Total Length 0, i.e. ~(sum of the static words).

    The checksum of the real header is then `base - total_length` in one's complement
    (see `checksum_subtract`): the only per-packet arithmetic the transmitter does.
    """
    return ipv4_checksum_rfc1071(header[ETH_HEADER_LEN:ETH_HEADER_LEN + IPV4_HEADER_LEN])


def checksum_subtract(base, total_length):
    """The transmitter's formula: 16-bit subtraction with end-around borrow.

    In one's complement, a - b is a + ~b with end-around carry; that equals the two's-complement
    difference when no borrow occurs and one less when it does.
    """
    diff   = base - total_length
    borrow = 1 if diff < 0 else 0
    return (diff - borrow) & 0xffff


def udp_frame(src_mac, src_ip, dst_mac, dst_ip, src_port, dst_port, payload):
    """The exact frame (without FCS/padding) the transmitter sends for `payload`."""
    header = static_header(src_mac, src_ip, dst_mac, dst_ip, src_port, dst_port)
    total_length = IPV4_HEADER_LEN + UDP_HEADER_LEN + len(payload)
    checksum     = checksum_subtract(ipv4_checksum_base(header), total_length)
    header[IPV4_TOTAL_LENGTH_OFFSET:IPV4_TOTAL_LENGTH_OFFSET + 2] = _be(total_length, 2)
    header[IPV4_CHECKSUM_OFFSET:IPV4_CHECKSUM_OFFSET + 2]         = _be(checksum, 2)
    header[UDP_LENGTH_OFFSET:UDP_LENGTH_OFFSET + 2]               = _be(UDP_HEADER_LEN + len(payload), 2)
    return bytes(header) + bytes(payload)

# Generator payload --------------------------------------------------------------------------------

# Bytes 0..3: the packet's 32-bit sequence number, big-endian, starting at 0.
# Byte i >= 4: (seq + i) & 0xff. A payload shorter than 4 bytes carries the first bytes of the
# sequence number only. The host tool checks every byte of every packet against this.
GENERATOR_SEQ_BYTES = 4

def generator_payload(seq, length):
    seq &= 0xffffffff
    head = seq.to_bytes(GENERATOR_SEQ_BYTES, "big")
    return bytes(head[i] if i < GENERATOR_SEQ_BYTES else (seq + i) & 0xff for i in range(length))

# Receiver drop reasons ----------------------------------------------------------------------------

# In the order the receiver checks them; a frame is counted once, under its first failing check.
RX_DROP_REASONS = [
    ("mac",       "Destination MAC is not the FPGA's."),
    ("ethertype", "EtherType is not IPv4 (ARP frames are answered by the ARP responder)."),
    ("ihl",       "Version/IHL is not 4/5 (options are not supported)."),
    ("fragment",  "More-fragments set or non-zero fragment offset."),
    ("protocol",  "IP protocol is not UDP."),
    ("ip",        "Destination IP is not the FPGA's."),
    ("port",      "Destination UDP port is not the FPGA's."),
    ("checksum",  "IPv4 header checksum is wrong."),
    ("length",    "UDP Length below 8, or IPv4 Total Length is not UDP Length + 20."),
    ("oversize",  "Payload longer than the configured maximum (MTU - 28)."),
    ("truncated", "Frame ended before the header or the announced payload was complete."),
    ("error",     "The MAC flagged the frame (bad FCS)."),
    ("overflow",  "No room left in the receive buffer."),
]
