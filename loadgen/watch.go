package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	pb "github.com/grpc-python-bench/loadgen/benchpb"
)

// watchReport: ghz's shape, where each reading received in the window is one OK entry of details (its
// latency: receipt time minus the reading's timestamp, same host clock) and total is the window; then
// how the streams fared.
type watchReport struct {
	ghzReport
	Streams     int `json:"streams"`
	Connections int `json:"connections"`
	Sensors     int `json:"sensors"`
	IntervalMs  int `json:"interval_ms"`
	// Answered created within establishWithin (1 s) of sending the create request; later; never.
	Established     int `json:"established"`
	EstablishedLate int `json:"established_late"`
	NotEstablished  int `json:"not_established"`
	// What the created streams should have received in the window: one reading per interval each.
	ExpectedReadings int64 `json:"expected_readings"`
	// How the streams ended after the client closed its side: status code name -> streams.
	Ended map[string]int `json:"ended"`
	// A stream's failure, if any: message -> streams.
	StreamErrors map[string]int `json:"stream_errors"`
}

const (
	establishWithin = time.Second
	perConnection   = 100 // streams per HTTP/2 connection, under servers' usual concurrent-stream limits
)

// stream is one Watch stream's outcome.
type stream struct {
	createdAfter time.Duration // -1: never created
	latencies    []int64       // of readings inside the window
	ended        string
	err          string
}

// runWatch opens -streams Watch streams at once, each watching one sensor (s0 .. s<sensors-1>, stream i
// the sensor i mod -sensors), lets them settle for -settle, counts readings for -seconds, then closes
// each stream's sending side and waits for the server to end it.
func runWatch(args []string) (any, error) {
	set := flag.NewFlagSet("watch", flag.ContinueOnError)
	target := set.String("target", "", "server address HOST:PORT")
	streams := set.Int("streams", 10, "Watch streams")
	sensors := set.Int("sensors", 100, "sensors s0 .. s<N-1>, spread over the streams")
	window := set.Duration("seconds", 10*time.Second, "how long readings are counted")
	settle := set.Duration("settle", 2*time.Second, "from opening the streams to counting readings")
	interval := set.Duration("interval", 100*time.Millisecond, "the server's reading interval (--sensor-interval-ms)")
	if err := parse(set, args, target); err != nil {
		return nil, err
	}
	if *streams < 1 || *sensors < 1 || *window <= 0 || *interval <= 0 {
		return nil, fmt.Errorf("watch: -streams, -sensors, -seconds and -interval must be positive")
	}
	connections, closeAll, err := dialEach(*target, (*streams+perConnection-1)/perConnection)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	begun := time.Now()
	from, until := begun.Add(*settle), begun.Add(*settle+*window)
	outcomes := make([]stream, *streams)
	var group sync.WaitGroup
	for i := range outcomes {
		group.Add(1)
		go func(i int) {
			defer group.Done()
			client := pb.NewSensorClient(connections[i/perConnection])
			outcomes[i] = watchOne(client, fmt.Sprintf("s%d", i%*sensors), from, until)
		}(i)
	}
	group.Wait()
	return summarise(outcomes, *streams, len(connections), *sensors, *window, *interval), nil
}

// watchOne runs one stream: create, read until the window closes, close the sending side, read to the end.
func watchOne(client pb.SensorClient, sensor string, from, until time.Time) stream {
	outcome := stream{createdAfter: -1}
	ctx, cancel := context.WithDeadline(context.Background(), until.Add(10*time.Second))
	defer cancel()
	sent := time.Now()
	watch, err := client.Watch(ctx)
	if err == nil {
		err = watch.Send(&pb.WatchRequest{Request: &pb.WatchRequest_CreateRequest{CreateRequest: &pb.WatchCreateRequest{SensorId: sensor}}})
	}
	if err != nil {
		outcome.ended, outcome.err = codeName(err), err.Error()
		return outcome
	}
	closer := time.AfterFunc(time.Until(until), func() { _ = watch.CloseSend() })
	defer closer.Stop()
	for {
		response, err := watch.Recv()
		received := time.Now()
		if err == io.EOF {
			outcome.ended = "OK"
			return outcome
		}
		if err != nil {
			outcome.ended, outcome.err = codeName(err), err.Error()
			return outcome
		}
		switch {
		case response.Created:
			outcome.createdAfter = received.Sub(sent)
		case response.Error != "" || response.Canceled:
			outcome.err = fmt.Sprintf("canceled: %s", response.Error)
		case response.Timestamp != nil && !received.Before(from) && received.Before(until):
			outcome.latencies = append(outcome.latencies, max(0, received.Sub(response.Timestamp.AsTime()).Nanoseconds()))
		}
	}
}

func summarise(outcomes []stream, streams, connections, sensors int, window, interval time.Duration) watchReport {
	report := watchReport{
		Streams: streams, Connections: connections, Sensors: sensors, IntervalMs: int(interval.Milliseconds()),
		Ended: map[string]int{}, StreamErrors: map[string]int{},
	}
	var readings recorder
	perStream := int64(window / interval)
	for _, outcome := range outcomes {
		switch {
		case outcome.createdAfter < 0:
			report.NotEstablished++
		case outcome.createdAfter <= establishWithin:
			report.Established++
			report.ExpectedReadings += perStream
		default:
			report.EstablishedLate++
			report.ExpectedReadings += perStream
		}
		for _, latency := range outcome.latencies {
			readings.details = append(readings.details, detail{Latency: latency, Status: "OK"})
		}
		report.Ended[outcome.ended]++
		if outcome.err != "" {
			report.StreamErrors[outcome.err]++
		}
	}
	options := map[string]any{"streams": streams, "sensors": sensors, "seconds": window.Seconds()}
	report.ghzReport = readings.summary(window, options)
	return report
}
