package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	pb "github.com/grpc-python-bench/loadgen/benchpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// slowReport: ghz's shape, where each message a stream read is one OK entry of details (its latency: how long
// the read waited for it), and total is the window; then how -streams server streams fared under a reader slower
// than the server: what each read before the client cancelled it, and how each ended. The server's memory
// meanwhile is the harness's to sample.
type slowReport struct {
	ghzReport
	Streams     int     `json:"streams"`
	Connections int     `json:"connections"`
	EveryMs     int64   `json:"every_ms"` // one message read per this many ms; 0: the first, then none
	Seconds     float64 `json:"seconds"`  // from the streams' opening to their cancelling
	WindowBytes int     `json:"window_bytes"`
	// Streams whose first message came; the messages and payload bytes each stream read.
	Opened   int     `json:"opened"`
	Messages []int   `json:"messages"`
	Bytes    []int64 `json:"bytes"`
	// How the streams ended: "Canceled" where the client cancelled them as it meant to, "OK" where the server
	// ended one first (it had sent everything), any other code name where it failed; with each failure's message.
	Ended        map[string]int `json:"ended"`
	StreamErrors map[string]int `json:"stream_errors"`
}

// runSlow opens -streams StreamObjects streams at once over -connections connections whose HTTP/2 windows are
// fixed at -window bytes (no growth by bandwidth estimate), reads each one message every -every (0: its first
// message only) for -seconds, then cancels every stream and waits for each to end.
func runSlow(args []string) (any, error) {
	set := flag.NewFlagSet("slow", flag.ContinueOnError)
	target := set.String("target", "", "server address HOST:PORT")
	bucket := set.String("bucket", "", "the bucket each stream lists")
	batch := set.Uint("batch", 1, "objects per message")
	streams := set.Int("streams", 10, "streams opened at once")
	connections := set.Int("connections", 1, "connections the streams share (stream i on connection i mod N)")
	every := set.Duration("every", 0, "read one message every this long; 0: the first message, then none")
	seconds := set.Duration("seconds", 10*time.Second, "from opening the streams to cancelling them")
	window := set.Int("window", 64*1024, "each connection's and stream's HTTP/2 receive window, bytes (>= 65535)")
	if err := parse(set, args, target); err != nil {
		return nil, err
	}
	switch {
	case *bucket == "":
		return nil, fmt.Errorf("slow: -bucket is required")
	case *streams < 1 || *connections < 1 || *connections > *streams:
		return nil, fmt.Errorf("slow: need 1 <= -connections <= -streams, got %d and %d", *connections, *streams)
	case *seconds <= 0 || *every < 0:
		return nil, fmt.Errorf("slow: -seconds must be positive and -every not negative")
	case *window < 65535:
		return nil, fmt.Errorf("slow: -window must be at least 65535 (HTTP/2's initial window), got %d", *window)
	}
	// Each stream's window is fixed at -window; its connection's holds every stream's, so that a stream the server
	// can no longer send on is held by its own window, not by its neighbours' on a shared connection window.
	perConnection := (*streams + *connections - 1) / *connections
	windows := []grpc.DialOption{
		grpc.WithInitialWindowSize(int32(*window)), grpc.WithInitialConnWindowSize(int32(*window * perConnection)),
	}
	held := make([]*grpc.ClientConn, 0, *connections)
	defer func() {
		for _, conn := range held {
			conn.Close()
		}
	}()
	for range *connections {
		conn, err := dial(*target, windows...)
		if err != nil {
			return nil, err
		}
		held = append(held, conn)
	}
	request := &pb.ListObjectsRequest{Bucket: *bucket, BatchSize: uint32(*batch)}
	report := slowReport{
		Streams: *streams, Connections: *connections, EveryMs: every.Milliseconds(), Seconds: seconds.Seconds(),
		WindowBytes: *window, Messages: make([]int, *streams), Bytes: make([]int64, *streams),
		Ended: map[string]int{}, StreamErrors: map[string]int{},
	}
	var (
		mu    sync.Mutex
		group sync.WaitGroup
		reads recorder
	)
	until := time.Now().Add(*seconds)
	for i := range *streams {
		group.Add(1)
		go func(i int) {
			defer group.Done()
			store := pb.NewObjectStoreClient(held[i%len(held)])
			read, bytes, opened, ended, failure := readSlowly(store, request, *every, until, &reads)
			mu.Lock()
			defer mu.Unlock()
			report.Messages[i], report.Bytes[i] = read, bytes
			if opened {
				report.Opened++
			}
			report.Ended[ended]++
			if failure != "" {
				report.StreamErrors[failure]++
			}
		}(i)
	}
	group.Wait()
	options := map[string]any{"streams": *streams, "every_ms": every.Milliseconds(), "seconds": seconds.Seconds()}
	report.ghzReport = reads.summary(*seconds, options)
	return report, nil
}

// readSlowly runs one stream: its first message, then one every `every` (none where it is 0) until `until`, when
// it cancels the stream. Each message read goes to reads, with how long its read waited. It returns the messages
// and payload bytes read before the cancel, whether the first came, how the stream ended and any failure's message.
func readSlowly(
	store pb.ObjectStoreClient, request *pb.ListObjectsRequest, every time.Duration, until time.Time, reads *recorder,
) (read int, bytes int64, opened bool, ended, failure string) {
	ctx, cancel := context.WithDeadline(context.Background(), until)
	defer cancel()
	stream, err := store.StreamObjects(ctx, request)
	if err != nil {
		ended, failure = endOf(err, ctx)
		return 0, 0, false, ended, failure
	}
	for {
		asked := time.Now()
		reply, err := stream.Recv()
		if err != nil {
			ended, failure = endOf(err, ctx)
			return read, bytes, opened, ended, failure
		}
		if ctx.Err() != nil {
			continue // what the stream had buffered before the cancel: drained to its end, not read
		}
		reads.add(time.Since(asked), nil)
		read, bytes, opened = read+1, bytes+int64(proto.Size(reply)), true
		if every == 0 {
			<-ctx.Done() // the first message only: then no more until the cancel
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
	}
}

// endOf names how a stream ended: OK at its end, Canceled where our own cancel (the deadline) ended it, with no
// failure; else the status's code name and its message. After our cancel, a message it cut short reads as Internal
// "unexpected EOF" (grpc-go's RecvMsg): that too is our cancel's doing.
func endOf(err error, ctx context.Context) (string, string) {
	if err == io.EOF {
		return "OK", ""
	}
	code := status.Code(err)
	cutShort := code == codes.Internal && status.Convert(err).Message() == io.ErrUnexpectedEOF.Error()
	if ctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || code == codes.DeadlineExceeded ||
		code == codes.Canceled || cutShort) {
		return "Canceled", ""
	}
	return codeName(err), err.Error()
}
