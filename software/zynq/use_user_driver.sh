#!/bin/sh
# This file is part of hostlink.
# Copyright (c) 2026 hostlink developers
# SPDX-License-Identifier: BSD-2-Clause
#
# Hand the Zynq SoC's AXI DMA from Linux's xilinx_dma to a user-level driver, as one hands a device to UIO on a
# board: unload hostlink's dmaengine client (it holds the channels), unbind the device from xilinx_dma, name
# hostlink_dma_user as its driver (driver_override) and load that module (software/zynq/hostlink_dma_user.c).
#
#     use_user_driver.sh PATH/hostlink_dma_user.ko [DEVICE]      DEVICE: 10400000.dma by default
set -e
module=$1
device=${2:-10400000.dma}
if grep -q '^hostlink_dma_client ' /proc/modules; then rmmod hostlink_dma_client; fi
if [ -e /sys/bus/platform/devices/$device/driver ]; then
    echo "$device" > /sys/bus/platform/devices/$device/driver/unbind
fi
echo hostlink_dma_user > /sys/bus/platform/devices/$device/driver_override
insmod "$module"
test -c /dev/hostlink_dma_user
echo "$device: driven by $(basename "$(readlink /sys/bus/platform/devices/$device/driver)")"
