# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause

"""Minimal UDP/IPv4 endpoint on LiteEth's MAC: transmitter, receiver, ARP responder, generator."""

from hostlink.cores.udp.common import udp_payload_layout
from hostlink.cores.udp.transmitter import UDPTransmitter
from hostlink.cores.udp.receiver import UDPReceiver
from hostlink.cores.udp.arp import ARPResponder
from hostlink.cores.udp.generator import PacketGenerator
from hostlink.cores.udp.core import UDPCore
