# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Tiny ARP responder: answers "who has <fpga_ip>" so a host needs no static ARP entry."""

from migen import *

from litex.gen import *

from litex.soc.interconnect import stream

from hostlink.cores.udp.common import *

# ARP Responder ------------------------------------------------------------------------------------

ARP_HTYPE_ETHERNET = 0x0001
ARP_OPER_REQUEST   = 0x0001
ARP_OPER_REPLY     = 0x0002
ARP_FRAME_LEN      = ETH_HEADER_LEN + ARP_PACKET_LEN # 42 bytes; the MAC pads to 60.

# Offsets in the frame of the sender's addresses of a request.
ARP_SHA_OFFSET = ETH_HEADER_LEN + 8
ARP_SPA_OFFSET = ETH_HEADER_LEN + 14
ARP_TPA_OFFSET = ETH_HEADER_LEN + 24


def arp_reply_frame(fpga_mac, fpga_ip, host_mac, host_ip):
    """The reply the responder sends to a request from (host_mac, host_ip)."""
    frame  = list(host_mac.to_bytes(6, "big")) + list(fpga_mac.to_bytes(6, "big"))
    frame += list(ETHERTYPE_ARP.to_bytes(2, "big"))
    frame += list(ARP_HTYPE_ETHERNET.to_bytes(2, "big")) + list(ETHERTYPE_IPV4.to_bytes(2, "big"))
    frame += [6, 4] + list(ARP_OPER_REPLY.to_bytes(2, "big"))
    frame += list(fpga_mac.to_bytes(6, "big")) + list(fpga_ip.to_bytes(4, "big"))
    frame += list(host_mac.to_bytes(6, "big")) + list(host_ip.to_bytes(4, "big"))
    return bytes(frame)


class ARPResponder(LiteXModule):
    """Watches every received frame (its sink is always ready) and answers ARP requests for
    `fpga_ip`, sent to the broadcast address or to `fpga_mac`, with one reply frame on `source`.
    Requests whose sender MAC is zero, broadcast or multicast are ignored: a reply to them would go
    to every station (or none), and no host can own such an address.

    One request is held at a time: requests that complete while a reply is pending are ignored
    (the host retries), which keeps the core to one set of sender registers.
    """
    def __init__(self, fpga_mac, fpga_ip):
        fpga_mac = mac_to_int(fpga_mac, "fpga_mac")
        fpga_ip  = ip_to_int(fpga_ip, "fpga_ip")

        self.sink    = sink   = stream.Endpoint(eth_raw_layout())
        self.source  = source = stream.Endpoint(eth_raw_layout())
        self.replied = Signal() # o: one cycle per reply sent.

        # # #

        # Request parsing.
        # ----------------
        count     = Signal(max=ARP_FRAME_LEN + 1)
        match     = Signal() # The frame so far is a request for us.
        bcast     = Signal() # The destination MAC so far is the broadcast address.
        unicast   = Signal() # The destination MAC so far is fpga_mac.
        byte_ok   = Signal()
        pending   = Signal()
        capturing = Signal()
        sha       = Signal(48)
        sha_set   = Signal() # A byte of the sender MAC so far is non-zero.
        spa       = Signal(32)

        fixed = {12 + i: v for i, v in enumerate(
            list(ETHERTYPE_ARP.to_bytes(2, "big")) +
            list(ARP_HTYPE_ETHERNET.to_bytes(2, "big")) + list(ETHERTYPE_IPV4.to_bytes(2, "big")) +
            [6, 4] + list(ARP_OPER_REQUEST.to_bytes(2, "big")))}
        fixed.update({ARP_TPA_OFFSET + i: v for i, v in enumerate(fpga_ip.to_bytes(4, "big"))})
        cases = {i: byte_ok.eq(sink.data == v) for i, v in fixed.items()}
        cases["default"] = byte_ok.eq(1)
        self.comb += Case(count, cases)

        mac_bytes   = list(fpga_mac.to_bytes(6, "big"))
        mac_byte_ok = Signal()
        self.comb += Case(count, {i: mac_byte_ok.eq(sink.data == v) for i, v in enumerate(mac_bytes)})
        self.sync += If(sink.valid,
            If(count < ARP_FRAME_LEN, count.eq(count + 1)),
            If(count == 0,
                capturing.eq(~pending),
                sha_set.eq(0),
                match.eq(byte_ok),
                bcast.eq(sink.data == 0xff),
                unicast.eq(sink.data == mac_bytes[0]),
            ).Elif(count < 6,
                bcast.eq(bcast & (sink.data == 0xff)),
                unicast.eq(unicast & mac_byte_ok),
            ).Elif(count < ARP_FRAME_LEN,
                match.eq(match & byte_ok),
            ),
            If(capturing & (count >= ARP_SHA_OFFSET) & (count < ARP_SHA_OFFSET + 6),
                sha.eq(Cat(sink.data, sha[:40])),
                sha_set.eq(sha_set | (sink.data != 0))
            ),
            If(capturing & (count >= ARP_SPA_OFFSET) & (count < ARP_SPA_OFFSET + 4),
                spa.eq(Cat(sink.data, spa[:24]))
            ),
            If(sink.last,
                count.eq(0),
                # The frame must reach the target IP (shorter ones are malformed) and be error-free.
                # The sender MAC's first byte is sha[40:48]: its bit 0 is the group (multicast) bit,
                # set in the broadcast address too.
                If(capturing & match & (bcast | unicast) & (count >= ARP_FRAME_LEN - 1) &
                   (sink.error == 0) & ~pending & sha_set & ~sha[40],
                    pending.eq(1)
                )
            )
        )
        self.comb += sink.ready.eq(1)

        # Reply.
        # ------
        # The reply is the request's frame template with the captured sender as target.
        reply = Signal(8)
        tcount = Signal(max=ARP_FRAME_LEN)
        template = arp_reply_frame(fpga_mac, fpga_ip, 0, 0)
        sha_bytes = [sha[8*(5 - i):8*(6 - i)] for i in range(6)]
        spa_bytes = [spa[8*(3 - i):8*(4 - i)] for i in range(4)]
        dynamic = {}
        for i in range(6):
            dynamic[i] = sha_bytes[i]
            dynamic[ETH_HEADER_LEN + 18 + i] = sha_bytes[i]
        for i in range(4):
            dynamic[ETH_HEADER_LEN + 24 + i] = spa_bytes[i]
        self.comb += Case(tcount, {i: reply.eq(dynamic.get(i, v)) for i, v in enumerate(template)})

        self.comb += [
            source.valid.eq(pending),
            source.data.eq(reply),
            source.last.eq(tcount == ARP_FRAME_LEN - 1),
            source.last_be.eq(source.last),
        ]
        self.sync += If(source.valid & source.ready,
            If(source.last,
                tcount.eq(0),
                pending.eq(0)
            ).Else(
                tcount.eq(tcount + 1)
            )
        )
        self.comb += self.replied.eq(source.valid & source.ready & source.last)
