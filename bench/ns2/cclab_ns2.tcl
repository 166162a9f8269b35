# The ns-2.35 side of cclab's referee harness (bench/ns2/ns2run.py).
#
# ns2run.py writes a run script that sources this file, describes the network and
# the classes with the procs below, schedules every flow with `$ns at`, and calls
# cc_run. Each flow is an agent pair created when it arrives (so a long list does
# not hold thousands of idle agents), with an application on the receiving agent
# that counts the bytes delivered in order: the flow is finished when the last of
# its packets has arrived in order, the time cclab's flows table records.
# At the end the script writes flows.csv, links.csv and perf.json into its folder.

set ns [new Simulator]
# The flows table as rows of CSV, filled when the run ends.
array set flow {}
array set cls {}
array set node {}
set links {}
set nflows 0

# A receiving application: counts the bytes its agent delivers in order and
# records when they reach what the flow sends (ns-2 calls `recv` for each delivery:
# Agent::recvBytes -> Application::recv, which evaluates this proc).
Class Application/CclabSink -superclass Application
Application/CclabSink instproc init {id expected} {
	$self next
	$self instvar id_ expected_ got_
	set id_ $id
	set expected_ $expected
	set got_ 0
}
Application/CclabSink instproc recv {nbytes} {
	$self instvar id_ expected_ got_
	global ns flow
	incr got_ $nbytes
	if {$expected_ > 0 && $got_ >= $expected_ && $flow($id_,finish) < 0} {
		set flow($id_,finish) [$ns now]
	}
}

proc cc_init {seed duration warmup out} {
	global ns defaultRNG run
	$defaultRNG seed $seed
	set run(duration) $duration
	set run(warmup) $warmup
	set run(out) $out
	set run(wall0) [clock milliseconds]
}

proc cc_node {i} {
	global ns node
	set node($i) [$ns node]
}

# A directed link: `limit` is ns-2's limit_ (packets, or bytes with `inbytes`).
proc cc_link {name from to rate delay qtype limit inbytes qvars} {
	global ns node links link
	$ns simplex-link $node($from) $node($to) $rate $delay $qtype
	set q [[$ns link $node($from) $node($to)] queue]
	$q set limit_ $limit
	if {$inbytes} {
		if {$qtype == "DropTail"} {
			$q set queue_in_bytes_ true
			$q set mean_pktsize_ 1
		}
	}
	foreach {k v} $qvars { $q set $k $v }
	set link($name,mon) [$ns monitor-queue $node($from) $node($to) 0]
	set link($name,rate) $rate
	set link($name,from) $from
	set link($name,to) $to
	lappend links $name
}

# A class: `kind` is tcp, tfrc or udp; the agents and their variables; `app` the
# sending application of udp classes with its variables; `ca` the Linux module of
# Agent/TCP/Linux ("" for none); `perpkt` and `first` the bytes the receiving agent
# counts per data packet and for the connection's first packet (the SYN); `ssthresh`
# the initial ssthresh_ of a TCP agent (-1: what reset() derives from window_).
proc cc_class {c name kind src dst agent avars sink svars app appvars ca perpkt first ssthresh} {
	global cls
	foreach {k v} [list name $name kind $kind src $src dst $dst agent $agent avars $avars sink $sink \
			svars $svars app $app appvars $appvars ca $ca perpkt $perpkt first $first \
			ssthresh $ssthresh] {
		set cls($c,$k) $v
	}
}

# Flow `id` of class `c` arrives: `npkts` packets to send (-1: long-lived).
proc cc_flow {id c npkts} {
	global ns node cls flow run nflows
	set snd [new $cls($c,agent)]
	foreach {k v} $cls($c,avars) { $snd set $k $v }
	$snd set fid_ $id
	set rcv [new $cls($c,sink)]
	foreach {k v} $cls($c,svars) { $rcv set $k $v }
	$ns attach-agent $node($cls($c,src)) $snd
	$ns attach-agent $node($cls($c,dst)) $rcv
	$ns connect $snd $rcv
	set now [$ns now]
	set flow($id,class) $c
	set flow($id,npkts) $npkts
	set flow($id,arrival) $now
	set flow($id,finish) -1
	set flow($id,snd) $snd
	set flow($id,rcv) $rcv
	incr nflows
	if {$cls($c,kind) == "tcp"} {
		# An agent created during the run is not reset when its variables change (one
		# created before `$ns run` is, at the start): reset it, so that ssthresh_ and the
		# RTT state come from the variables just set (TcpAgent::reset, tcp.cc:455).
		$snd reset
		if {$cls($c,ssthresh) >= 0} { $snd set ssthresh_ $cls($c,ssthresh) }
		if {$cls($c,ca) != ""} { $snd select_ca $cls($c,ca) }
		set expected [expr {$npkts < 0 ? -1 : $cls($c,first) + $npkts * $cls($c,perpkt)}]
		set app [new Application/CclabSink $id $expected]
		$app attach-agent $rcv
		$app start
		set flow($id,sinkapp) $app
		if {$npkts < 0} {
			$snd advanceby 1000000000
		} else {
			$snd advanceby $npkts
		}
	} elseif {$cls($c,kind) == "tfrc"} {
		if {$npkts >= 0} { $snd set maxpkts_ $npkts }
		$snd start
	} else {
		set app [new $cls($c,app)]
		foreach {k v} $cls($c,appvars) { $app set $k $v }
		$app attach-agent $snd
		if {$npkts >= 0} { $app set maxpkts_ $npkts }
		$app start
		set flow($id,app) $app
	}
}

# Counters of every link and flow at the end of the warm-up, to subtract at the end.
proc cc_mark_warmup {} {
	global ns links link flow
	foreach key [array names flow *,class] {
		set id [lindex [split $key ,] 0]
		set flow($id,wgot) [cc_delivered $id]
	}
	foreach name $links {
		set m $link($name,mon)
		set pi [$m get-pkts-integrator]
		set bi [$m get-bytes-integrator]
		$pi newpoint [$ns now] [$pi set lasty_]
		$bi newpoint [$ns now] [$bi set lasty_]
		foreach v {parrivals_ barrivals_ pdepartures_ bdepartures_ pdrops_ bdrops_} {
			set link($name,w,$v) [$m set $v]
		}
		set link($name,w,psum) [$pi set sum_]
		set link($name,w,bsum) [$bi set sum_]
	}
}

proc cc_progress {} {
	global ns run nflows
	puts stderr [format "ns-2: %.0f of %.0f s, %d flows" [$ns now] $run(duration) $nflows]
	$ns at [expr {[$ns now] + $run(duration) / 10.0}] "cc_progress"
}

# A flow's receiving agent's count of delivered bytes, by kind.
proc cc_delivered {id} {
	global flow cls
	set c $flow($id,class)
	set kind $cls($c,kind)
	if {$kind == "tcp"} {
		return [$flow($id,sinkapp) set got_]
	}
	return [$flow($id,rcv) set bytes_]
}

proc cc_write {} {
	global ns flow cls run links link nflows
	set now [$ns now]
	set f [open [file join $run(out) flows.csv] w]
	puts $f "id,class,npkts,arrival,finish,delivered_bytes,delivered_at_warmup,retransmissions,timeouts,sent_packets"
	foreach key [lsort -dictionary [array names flow *,class]] {
		set id [lindex [split $key ,] 0]
		set snd $flow($id,snd)
		set c $flow($id,class)
		if {$cls($c,kind) == "tcp"} {
			set rtx [$snd set nrexmitpack_]
			set tos [$snd set nrexmit_]
			set sent [$snd set ndatapack_]
		} elseif {$cls($c,kind) == "tfrc"} {
			set rtx 0; set tos 0
			set sent [$snd set ndatapack_]
		} else {
			set rtx 0; set tos 0; set sent -1
		}
		set wgot [expr {[info exists flow($id,wgot)] ? $flow($id,wgot) : 0}]
		puts $f "$id,$c,$flow($id,npkts),$flow($id,arrival),$flow($id,finish),[cc_delivered $id],$wgot,$rtx,$tos,$sent"
	}
	close $f
	set f [open [file join $run(out) links.csv] w]
	puts $f "name,from,to,rate_bps,arrivals,arrival_bytes,departures,departure_bytes,drops,drop_bytes,queue_packet_seconds,queue_byte_seconds,measured_s"
	foreach name $links {
		set m $link($name,mon)
		set pi [$m get-pkts-integrator]
		set bi [$m get-bytes-integrator]
		$pi newpoint $now [$pi set lasty_]
		$bi newpoint $now [$bi set lasty_]
		set row [list $name $link($name,from) $link($name,to) $link($name,rate)]
		foreach v {parrivals_ barrivals_ pdepartures_ bdepartures_ pdrops_ bdrops_} {
			lappend row [expr {[$m set $v] - $link($name,w,$v)}]
		}
		lappend row [expr {[$pi set sum_] - $link($name,w,psum)}]
		lappend row [expr {[$bi set sum_] - $link($name,w,bsum)}]
		lappend row [expr {$now - $run(warmup)}]
		puts $f [join $row ,]
	}
	close $f
	set f [open [file join $run(out) perf.json] w]
	puts $f [format "{\"wall_s\": %.3f, \"flows\": %d, \"simulated_s\": %s}" \
		[expr {([clock milliseconds] - $run(wall0)) / 1000.0}] $nflows $now]
	close $f
}

proc cc_finish {} {
	global ns
	cc_write
	$ns halt
}

proc cc_run {progress} {
	global ns run
	$ns at $run(warmup) "cc_mark_warmup"
	if {$progress} { $ns at 0 "cc_progress" }
	$ns at $run(duration) "cc_finish"
	$ns run
}
