# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""`add_liteeth_udp_echo()`: LiteEth's own ARP/IP/UDP stack as a UDP echo, the reference SoC the area
report (reports/ecp5_area.py) puts next to hostlink's UDPCore (`--ethernet-stack liteeth`)."""

from migen import *

from hostlink.cores.udp.common import mac_to_int, ip_to_int

# LiteEth UDP echo ---------------------------------------------------------------------------------

def add_liteeth_udp_echo(soc, phy, eth_clk_freq, fpga_mac, fpga_ip, fpga_port):
    """LiteEth's own MAC/ARP/IP/ICMP/UDP stack answering UDP on `fpga_port` with the same payload,
    in the same `eth` data plane clock: the reference the area report puts next to hostlink's core."""
    from liteeth.core import LiteEthUDPIPCore   # Only this reference SoC needs LiteEth's stack.
    soc.ethcore = ClockDomainsRenamer({"sys": "eth"})(LiteEthUDPIPCore(phy,
        mac_address       = mac_to_int(fpga_mac, "fpga_mac"),
        ip_address        = ip_to_int(fpga_ip, "fpga_ip"),
        clk_freq          = eth_clk_freq,
        dw                = 8,
        with_sys_datapath = True,
    ))
    port = soc.ethcore.udp.crossbar.get_port(fpga_port, dw=8)
    soc.comb += [
        port.source.connect(port.sink, omit={"src_port", "dst_port", "ip_address"}),
        port.sink.src_port.eq(fpga_port),
        port.sink.dst_port.eq(port.source.src_port),
        port.sink.ip_address.eq(port.source.ip_address),
    ]
