#!/usr/bin/env python3
"""make.py - writes the system-snapshot fixtures of tests/data/system/ (run it from anywhere; the files are committed).

Stand-ins in the real formats, since no GPU exists here:
 - nvidia-smi-q.xml: `nvidia-smi -q -x`, element for element as NVIDIA's nvsmi_device_v12.dtd lays a <gpu> out
   (the order and names of a real output: influxdata/telegraf plugins/inputs/nvidia_smi/testdata/a100-sxm4-v12.xml,
   driver 535.54.03), values of an H100 SXM5 80GB (700 W, 1980 MHz max SM clock);
 - v11.xml: the layout of drivers before 530 (<power_readings> with enforced_power_limit, ECC as single_bit/double_bit
   totals, clocks_throttle_reasons);
 - host.txt: "### <command>" sections with each command's output, as the job writes them;
 - telemetry/<node>.csv: `nvidia-smi --query-gpu=<the interface's fields> --format=csv,nounits -lms 2000` (header with
   units in brackets, ", "-separated fields: utkuozdemir/nvidia_gpu_exporter internal/exporter/testdata/query.txt);
 - old-units.csv: `--format=csv` of a pre-535 driver (units in the values, clocks_throttle_reasons.*, the active
   reasons as NVML's hex bitmask, [N/A] and [Not Supported]).
run4 is a four-node run: n2's GPUs are capped at 500 W, n3 GPU 5 is in HW slowdown (1410 MHz) from 06:00:20 to
06:00:44, n4 runs another driver.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def gpu_xml(i, node, power_limit=700.0, default_limit=700.0, ecc=(0, 0, 0, 0), remap_pending="No",
            remap_failure="No", retired="No", v11=False, mig="Disabled"):
    bus = "00000000:%02X:00.0" % (0x18 + 0x10 * i)
    serial = "16524230%05d" % (int(node[1:]) * 100 + i)
    uuid = "GPU-%08x-7d19-4063-b049-1e6966%06x" % (0x5135360 + int(node[1:]), i)
    vol_sbe, vol_dbe, agg_sbe, agg_dbe = ecc
    if v11:
        ecc_xml = f"""        <ecc_errors>
            <volatile>
                <single_bit>
                    <device_memory>{vol_sbe}</device_memory>
                    <register_file>0</register_file>
                    <total>{vol_sbe}</total>
                </single_bit>
                <double_bit>
                    <device_memory>{vol_dbe}</device_memory>
                    <register_file>0</register_file>
                    <total>{vol_dbe}</total>
                </double_bit>
            </volatile>
            <aggregate>
                <single_bit>
                    <device_memory>{agg_sbe}</device_memory>
                    <total>{agg_sbe}</total>
                </single_bit>
                <double_bit>
                    <device_memory>{agg_dbe}</device_memory>
                    <total>{agg_dbe}</total>
                </double_bit>
            </aggregate>
        </ecc_errors>"""
        power = f"""        <power_readings>
            <power_state>P0</power_state>
            <power_management>Supported</power_management>
            <power_draw>71.02 W</power_draw>
            <power_limit>{power_limit:.2f} W</power_limit>
            <default_power_limit>{default_limit:.2f} W</default_power_limit>
            <enforced_power_limit>{power_limit:.2f} W</enforced_power_limit>
            <min_power_limit>100.00 W</min_power_limit>
            <max_power_limit>400.00 W</max_power_limit>
        </power_readings>"""
        reasons = "clocks_throttle_reason"
        product, maxsm = "NVIDIA A100-SXM4-40GB", 1410
    else:
        ecc_xml = f"""        <ecc_errors>
            <volatile>
                <sram_correctable>0</sram_correctable>
                <sram_uncorrectable_parity>0</sram_uncorrectable_parity>
                <sram_uncorrectable_secded>0</sram_uncorrectable_secded>
                <dram_correctable>{vol_sbe}</dram_correctable>
                <dram_uncorrectable>{vol_dbe}</dram_uncorrectable>
            </volatile>
            <aggregate>
                <sram_correctable>0</sram_correctable>
                <sram_uncorrectable_parity>0</sram_uncorrectable_parity>
                <sram_uncorrectable_secded>0</sram_uncorrectable_secded>
                <dram_correctable>{agg_sbe}</dram_correctable>
                <dram_uncorrectable>{agg_dbe}</dram_uncorrectable>
                <sram_threshold_exceeded>No</sram_threshold_exceeded>
            </aggregate>
            <aggregate_uncorrectable_sram_sources>
                <sram_l2>0</sram_l2>
                <sram_sm>0</sram_sm>
                <sram_microcontroller>0</sram_microcontroller>
                <sram_pcie>0</sram_pcie>
                <sram_other>0</sram_other>
            </aggregate_uncorrectable_sram_sources>
        </ecc_errors>"""
        power = f"""        <gpu_power_readings>
            <power_state>P0</power_state>
            <average_power_draw>71.02 W</average_power_draw>
            <instant_power_draw>70.55 W</instant_power_draw>
            <current_power_limit>{power_limit:.2f} W</current_power_limit>
            <requested_power_limit>{power_limit:.2f} W</requested_power_limit>
            <default_power_limit>{default_limit:.2f} W</default_power_limit>
            <min_power_limit>200.00 W</min_power_limit>
            <max_power_limit>700.00 W</max_power_limit>
        </gpu_power_readings>
        <module_power_readings>
            <power_state>P0</power_state>
            <average_power_draw>N/A</average_power_draw>
            <instant_power_draw>N/A</instant_power_draw>
            <current_power_limit>N/A</current_power_limit>
            <requested_power_limit>N/A</requested_power_limit>
            <default_power_limit>N/A</default_power_limit>
            <min_power_limit>N/A</min_power_limit>
            <max_power_limit>N/A</max_power_limit>
        </module_power_readings>"""
        reasons = "clocks_event_reason"
        product, maxsm = "NVIDIA H100 80GB HBM3", 1980
    rn = "clocks_throttle_reasons" if v11 else "clocks_event_reasons"
    return f"""    <gpu id="{bus}">
        <product_name>{product}</product_name>
        <product_brand>NVIDIA</product_brand>
        <product_architecture>{"Ampere" if v11 else "Hopper"}</product_architecture>
        <display_mode>Disabled</display_mode>
        <display_active>Disabled</display_active>
        <persistence_mode>Enabled</persistence_mode>
        <addressing_mode>None</addressing_mode>
        <mig_mode>
            <current_mig>{mig}</current_mig>
            <pending_mig>{mig}</pending_mig>
        </mig_mode>
        <mig_devices>
            None
        </mig_devices>
        <accounting_mode>Disabled</accounting_mode>
        <accounting_mode_buffer_size>4000</accounting_mode_buffer_size>
        <driver_model>
            <current_dm>N/A</current_dm>
            <pending_dm>N/A</pending_dm>
        </driver_model>
        <serial>{serial}</serial>
        <uuid>{uuid}</uuid>
        <minor_number>{i}</minor_number>
        <vbios_version>{"92.00.36.00.02" if v11 else "96.00.99.00.01"}</vbios_version>
        <multigpu_board>No</multigpu_board>
        <board_id>0x{0x18 + 0x10 * i:x}00</board_id>
        <gpu_part_number>2330-885-A1</gpu_part_number>
        <gpu_module_id>{i + 1}</gpu_module_id>
        <inforom_version>
            <img_version>G520.0200.00.05</img_version>
            <oem_object>2.1</oem_object>
            <ecc_object>7.16</ecc_object>
            <pwr_object>N/A</pwr_object>
        </inforom_version>
        <pci>
            <pci_bus>{0x18 + 0x10 * i:02X}</pci_bus>
            <pci_device>00</pci_device>
            <pci_domain>0000</pci_domain>
            <pci_device_id>233010DE</pci_device_id>
            <pci_bus_id>{bus}</pci_bus_id>
            <pci_sub_system_id>16C110DE</pci_sub_system_id>
            <pci_gpu_link_info>
                <pcie_gen>
                    <max_link_gen>{4 if v11 else 5}</max_link_gen>
                    <current_link_gen>{4 if v11 else 5}</current_link_gen>
                    <device_current_link_gen>{4 if v11 else 5}</device_current_link_gen>
                    <max_device_link_gen>{4 if v11 else 5}</max_device_link_gen>
                    <max_host_link_gen>{4 if v11 else 5}</max_host_link_gen>
                </pcie_gen>
                <link_widths>
                    <max_link_width>16x</max_link_width>
                    <current_link_width>16x</current_link_width>
                </link_widths>
            </pci_gpu_link_info>
            <replay_counter>0</replay_counter>
            <replay_rollover_counter>0</replay_rollover_counter>
            <tx_util>0 KB/s</tx_util>
            <rx_util>0 KB/s</rx_util>
        </pci>
        <fan_speed>N/A</fan_speed>
        <performance_state>P0</performance_state>
        <{rn}>
            <{reasons}_gpu_idle>Active</{reasons}_gpu_idle>
            <{reasons}_applications_clocks_setting>Not Active</{reasons}_applications_clocks_setting>
            <{reasons}_sw_power_cap>Not Active</{reasons}_sw_power_cap>
            <{reasons}_hw_slowdown>Not Active</{reasons}_hw_slowdown>
            <{reasons}_hw_thermal_slowdown>Not Active</{reasons}_hw_thermal_slowdown>
            <{reasons}_hw_power_brake_slowdown>Not Active</{reasons}_hw_power_brake_slowdown>
            <{reasons}_sync_boost>Not Active</{reasons}_sync_boost>
            <{reasons}_sw_thermal_slowdown>Not Active</{reasons}_sw_thermal_slowdown>
            <{reasons}_display_clocks_setting>Not Active</{reasons}_display_clocks_setting>
        </{rn}>
        <fb_memory_usage>
            <total>81559 MiB</total>
            <reserved>551 MiB</reserved>
            <used>0 MiB</used>
            <free>81008 MiB</free>
        </fb_memory_usage>
        <compute_mode>Default</compute_mode>
        <utilization>
            <gpu_util>0 %</gpu_util>
            <memory_util>0 %</memory_util>
            <encoder_util>0 %</encoder_util>
            <decoder_util>0 %</decoder_util>
        </utilization>
        <ecc_mode>
            <current_ecc>Enabled</current_ecc>
            <pending_ecc>Enabled</pending_ecc>
        </ecc_mode>
{ecc_xml}
        <retired_pages>
            <multiple_single_bit_retirement>
                <retired_count>N/A</retired_count>
                <retired_pagelist>N/A</retired_pagelist>
            </multiple_single_bit_retirement>
            <double_bit_retirement>
                <retired_count>N/A</retired_count>
                <retired_pagelist>N/A</retired_pagelist>
            </double_bit_retirement>
            <pending_blacklist>N/A</pending_blacklist>
            <pending_retirement>{retired}</pending_retirement>
        </retired_pages>
        <remapped_rows>
            <remapped_row_corr>0</remapped_row_corr>
            <remapped_row_unc>{1 if remap_pending == "Yes" else 0}</remapped_row_unc>
            <remapped_row_pending>{remap_pending}</remapped_row_pending>
            <remapped_row_failure>{remap_failure}</remapped_row_failure>
            <row_remapper_histogram>
                <row_remapper_histogram_max>2559 bank(s)</row_remapper_histogram_max>
                <row_remapper_histogram_high>0 bank(s)</row_remapper_histogram_high>
                <row_remapper_histogram_partial>0 bank(s)</row_remapper_histogram_partial>
                <row_remapper_histogram_low>0 bank(s)</row_remapper_histogram_low>
                <row_remapper_histogram_none>0 bank(s)</row_remapper_histogram_none>
            </row_remapper_histogram>
        </remapped_rows>
        <temperature>
            <gpu_temp>31 C</gpu_temp>
            <gpu_temp_tlimit>56 C</gpu_temp_tlimit>
            <gpu_temp_max_threshold>92 C</gpu_temp_max_threshold>
            <gpu_temp_slow_threshold>89 C</gpu_temp_slow_threshold>
            <gpu_temp_max_gpu_threshold>87 C</gpu_temp_max_gpu_threshold>
            <gpu_target_temperature>N/A</gpu_target_temperature>
            <memory_temp>38 C</memory_temp>
            <gpu_temp_max_mem_threshold>95 C</gpu_temp_max_mem_threshold>
        </temperature>
{power}
        <clocks>
            <graphics_clock>345 MHz</graphics_clock>
            <sm_clock>345 MHz</sm_clock>
            <mem_clock>2619 MHz</mem_clock>
            <video_clock>765 MHz</video_clock>
        </clocks>
        <applications_clocks>
            <graphics_clock>{maxsm} MHz</graphics_clock>
            <mem_clock>2619 MHz</mem_clock>
        </applications_clocks>
        <default_applications_clocks>
            <graphics_clock>{maxsm} MHz</graphics_clock>
            <mem_clock>2619 MHz</mem_clock>
        </default_applications_clocks>
        <deferred_clocks>
            <mem_clock>N/A</mem_clock>
        </deferred_clocks>
        <max_clocks>
            <graphics_clock>{maxsm} MHz</graphics_clock>
            <sm_clock>{maxsm} MHz</sm_clock>
            <mem_clock>2619 MHz</mem_clock>
            <video_clock>1545 MHz</video_clock>
        </max_clocks>
        <max_customer_boost_clocks>
            <graphics_clock>{maxsm} MHz</graphics_clock>
        </max_customer_boost_clocks>
        <clock_policy>
            <auto_boost>N/A</auto_boost>
            <auto_boost_default>N/A</auto_boost_default>
        </clock_policy>
        <voltage>
            <graphics_volt>675.000 mV</graphics_volt>
        </voltage>
        <fabric>
            <state>N/A</state>
            <status>N/A</status>
        </fabric>
        <supported_clocks>
            <supported_mem_clock>
                <value>2619 MHz</value>
                <supported_graphics_clock>{maxsm} MHz</supported_graphics_clock>
                <supported_graphics_clock>1965 MHz</supported_graphics_clock>
            </supported_mem_clock>
        </supported_clocks>
        <processes>
        </processes>
        <accounted_processes>
        </accounted_processes>
    </gpu>
"""


def smi_xml(gpus, driver="550.54.15", cuda="12.4", v11=False):
    dtd = "nvsmi_device_v11.dtd" if v11 else "nvsmi_device_v12.dtd"
    return (f"""<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "{dtd}">
<nvidia_smi_log>
    <timestamp>Sun Nov 29 06:00:00 2026</timestamp>
    <driver_version>{driver}</driver_version>
    <cuda_version>{cuda}</cuda_version>
    <attached_gpus>{len(gpus)}</attached_gpus>
""" + "".join(gpus) + "</nvidia_smi_log>\n")


def host_txt(node, kernel="5.15.0-105-generic", nvlink_down=()):
    links = []
    for g in range(8):
        links.append(f"GPU {g}: NVIDIA H100 80GB HBM3 (UUID: GPU-{g:08x}-0000-0000-0000-000000000000)")
        for l in range(18):
            links.append(f"\t Link {l}: <inactive>" if (g, l) in nvlink_down else f"\t Link {l}: 26.562 GB/s")
    return f"""### uname -a
Linux {node} {kernel} #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux
### lscpu
Architecture:                       x86_64
CPU op-mode(s):                     32-bit, 64-bit
CPU(s):                             224
Model name:                         Intel(R) Xeon(R) Platinum 8480CL
Thread(s) per core:                 2
NUMA node(s):                       2
### cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor
performance
### numactl -H
available: 2 nodes (0-1)
node 0 cpus: 0-55,112-167
node 0 size: 1031848 MB
node 1 cpus: 56-111,168-223
node 1 size: 1032163 MB
### ibstat
CA 'mlx5_0'
	CA type: MT4129
	Number of ports: 1
	Port 1:
		State: Active
		Physical state: LinkUp
		Rate: 400
		Link layer: InfiniBand
CA 'mlx5_1'
	CA type: MT4129
	Number of ports: 1
	Port 1:
		State: Active
		Physical state: LinkUp
		Rate: 400
		Link layer: InfiniBand
### nvidia-smi topo -m
	GPU0	GPU1	NIC0	CPU Affinity	NUMA Affinity
GPU0	 X 	NV18	PXI	0-55,112-167	0
### nvidia-smi nvlink -s
""" + "\n".join(links) + """
### container
image=nvcr.io/nvidia/nemo:25.09
digest=sha256:3f8a0b6c2d1e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a
### versions
NCCL_VERSION=2.27.3
CUDA_VERSION=12.9.1.010
CUDNN_VERSION=9.10.2.21
TRANSFORMER_ENGINE_VERSION=2.5.0
"""


FIELDS = ("timestamp, index, uuid, pci.bus_id, power.draw [W], power.limit [W], clocks.sm [MHz], clocks.max.sm [MHz], "
          "clocks.mem [MHz], temperature.gpu, utilization.gpu [%], clocks_event_reasons.active, "
          "clocks_event_reasons.hw_slowdown, clocks_event_reasons.sw_power_cap, "
          "clocks_event_reasons.hw_thermal_slowdown, clocks_event_reasons.sw_thermal_slowdown, "
          "clocks_event_reasons.hw_power_brake_slowdown")


def telemetry(node, limit=700.0):
    rows = [FIELDS]
    for s in range(30):  # every 2 s from 06:00:00 to 06:00:58
        ts = "2026/11/29 06:00:%02d.%03d" % (2 * s, 17 + s % 7)
        for g in range(8):
            bus = "00000000:%02X:00.0" % (0x18 + 0x10 * g)
            uuid = "GPU-%08x-7d19-4063-b049-1e6966%06x" % (0x5135360 + int(node[1:]), g)
            hw = node == "n3" and g == 5 and 20 <= 2 * s <= 44
            cap = limit < 700
            power = (495.0 + (s % 3)) if cap else (652.0 + (g % 4) + (s % 5))
            sm = 1410 if hw else 1755 if cap else 1980
            mask = (0x8 if hw else 0) | (0x4 if cap else 0)
            act = lambda b: "Active" if b else "Not Active"
            rows.append(f"{ts}, {g}, {uuid}, {bus}, {power:.2f}, {limit:.2f}, {sm}, 1980, 2619, {61 + g % 3}, "
                        f"{97 + s % 3}, 0x{mask:016X}, {act(hw)}, {act(cap)}, Not Active, Not Active, Not Active")
    return "\n".join(rows) + "\n"


def write(path, text):
    path = os.path.join(HERE, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    for node in ("n1", "n2", "n3", "n4"):
        limit = 500.0 if node == "n2" else 700.0
        driver = "535.161.08" if node == "n4" else "550.54.15"
        cuda = "12.2" if node == "n4" else "12.4"
        write(f"run4/system/{node}/nvidia-smi-q.xml",
              smi_xml([gpu_xml(i, node, power_limit=limit) for i in range(8)], driver=driver, cuda=cuda))
        write(f"run4/system/{node}/host.txt", host_txt(node))
        write(f"run4/system/{node}/status", "ok 2.4\n")
        write(f"run4/telemetry/{node}.csv", telemetry(node, limit))
    # health: ECC errors, a pending remap, a pending retirement, MIG, an NVLink down
    write("health/system/h1/nvidia-smi-q.xml", smi_xml([
        gpu_xml(0, "h1"),
        gpu_xml(1, "h1", ecc=(12, 2, 40, 2)),
        gpu_xml(2, "h1", remap_pending="Yes"),
        gpu_xml(3, "h1", remap_failure="Yes", retired="Yes"),
        gpu_xml(4, "h1", mig="Enabled"),
        gpu_xml(5, "h1"), gpu_xml(6, "h1"), gpu_xml(7, "h1")]))
    write("health/system/h1/host.txt", host_txt("h1", nvlink_down={(6, 3), (6, 4)}))
    write("health/system/h1/status", "ok 1.9\n")
    # an older driver's layout
    write("v11.xml", smi_xml([gpu_xml(0, "a1", power_limit=400.0, default_limit=400.0, v11=True, ecc=(3, 0, 5, 1))],
                             driver="470.199.02", cuda="11.4", v11=True))
    # a pre-535 driver's --format=csv (units in the values), reasons as a bitmask and as words, [N/A]
    write("old-units.csv", "\n".join([
        "timestamp, index, power.draw [W], clocks.sm [MHz], clocks.max.sm [MHz], temperature.gpu, "
        "clocks_throttle_reasons.active, clocks_throttle_reasons.sw_thermal_slowdown",
        "2023/08/04 11:44:30.101, 0, 250.12 W, 1410 MHz, 1410 MHz, 60, 0x0000000000000000, Not Active",
        "2023/08/04 11:44:31.101, 0, 260.12 W, 1200 MHz, 1410 MHz, 62, 0x0000000000000088, Not Active",
        "2023/08/04 11:44:32.101, 0, [N/A], 705 MHz, 1410 MHz, 80, 0x0000000000000048, Active",
        "2023/08/04 11:44:33.101, 0, 270.12 W, [Not Supported], 1410 MHz, 63, 0x0000000000000004, Not Active",
        "2023/08/04 11:44:30.101, 1, 100.00 W, 1410 MHz, 1410 MHz, 50, 0x0000000000000000, Not Active",
        "this line is not nvidia-smi's",
        ""]))
    # a Megatron-Bridge run whose step lines carry timestamps (tests/data/parse/system-window): two nodes of two
    # GPUs sampled every 10 s from 06:00:00 to 06:12:00; GPU 1 of w2 in HW slowdown from 06:05:50 to 06:08:00 only,
    # which holds the llmb window (iterations 35-44: 06:06:04 to 06:07:48) and a fifth of the whole run
    case = os.path.join("..", "parse", "system-window", "in", "pretrain_deepseek_v3")
    write(os.path.join(case, "nemoperf.json"), json.dumps({"mbridge": {
        "recipe": "deepseek_v3", "dtype": "fp8_mx", "gpu_type": "gb300", "gpus": 256, "container": "26.08"}}) + "\n")
    log = []
    for i in range(1, 51):
        t = 10 + 10.42 * i
        log.append("Step Time : 10.42s GPU utilization: 1635.0MODEL_TFLOP/s/GPU")
        log.append(" [2026-11-29 06:%02d:%02d] iteration %8d/%8d | elapsed time per iteration (ms): 10420.0 | "
                   "global batch size:  4096 |" % (t // 60, t % 60, i, 50))
    write(os.path.join(case, "log-mb_7_0.out"), "\n".join(log) + "\n")
    for node in ("w1", "w2"):
        write(os.path.join(case, "system", node, "nvidia-smi-q.xml"),
              smi_xml([gpu_xml(i, "n" + node[1:]) for i in range(2)]))
        write(os.path.join(case, "system", node, "status"), "ok 1.2\n")
        rows = [FIELDS]
        for k in range(73):
            ts = "2026/11/29 06:%02d:%02d.250" % (10 * k // 60, 10 * k % 60)
            for g in range(2):
                hw = node == "w2" and g == 1 and 350 <= 10 * k <= 480
                act = lambda b: "Active" if b else "Not Active"
                rows.append(f"{ts}, {g}, GPU-{node}-{g}, 00000000:{0x18 + 0x10 * g:02X}:00.0, {650 + g}.00, 700.00, "
                            f"{1410 if hw else 1980}, 1980, 2619, 60, 99, 0x{0x8 if hw else 0:016X}, {act(hw)}, "
                            "Not Active, Not Active, Not Active, Not Active")
        write(os.path.join(case, "telemetry", node + ".csv"), "\n".join(rows) + "\n")
    # `dcgmi dmon -e 155,100,101,150,203,112 -d 1000` as DCGM lays it out (DCGM's short names, whitespace-aligned,
    # the header again after the samples; the reasons' bitmask in decimal): GPU 1 in HW slowdown (8) in two samples
    # of four, one power reading N/A, one line that is not dcgmi's
    head = ["#Entity   POWER    SMCLK    MMCLK    TMPTR    GPUTL    DVCCTR", "ID        W        MHZ      MHZ      C        %"]
    rows = head + [
        "GPU 0     650.125  1980     2619     61       99       0",
        "GPU 1     652.000  1980     2619     62       99       0",
        "GPU 0     651.125  1980     2619     61       99       4",
        "GPU 1     655.000  1410     2619     70       99       8",
        "Error: dcgmi lost its host engine",
    ] + head + [
        "GPU 0     N/A      1980     2619     61       98       0",
        "GPU 1     640.000  1410     2619     71       97       72",
        "GPU 0     652.125  1980     2619     61       99       0",
        "GPU 1     650.000  1980     2619     64       99       0",
    ]
    write("dmon.dcgm", "\n".join(rows) + "\n")
    # a missing nvidia-smi: the job's status line and host.txt only
    write("missing/system/m1/status", "missing nvidia-smi\n")
    write("missing/system/m1/host.txt", "### uname -a\nLinux m1 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux\n")


main()
