package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/grpc-python-bench/loadgen/benchpb"
	"google.golang.org/grpc"
)

// runCall: -total calls of one RPC by -concurrency workers, each starting its next call when the last one
// ended (ghz's closed loop and count mode). The workers share -connections connections (worker i uses
// connection i mod N, as ghz spreads its workers), or open a new one for every call and close it after.
func runCall(args []string) (any, error) {
	set := flag.NewFlagSet("call", flag.ContinueOnError)
	target := set.String("target", "", "server address HOST:PORT")
	method := set.String("method", "hello", "hello (SayHello), hello-stream (SayHelloStream), list-objects or stream-objects")
	bucket := set.String("bucket", "", "list-objects and stream-objects: the bucket")
	batch := set.Uint("batch", 1, "stream-objects: objects per message")
	delay := set.Uint("delay-ms", 0, "hello: milliseconds the server waits before it answers")
	work := set.Uint("work", 0, "hello: units of the server's fixed computation before it answers")
	replyBytes := set.Uint("reply-bytes", 0, "hello: bytes of payload in each reply")
	requestBytes := set.Uint("request-bytes", 0, "hello over gRPC: bytes of payload in each request (read and dropped)")
	httpVersion := set.String("http", "", "hello over REST (GET /v1/hello) on HTTP 1.1 or 2, not gRPC; one "+
		"connection per worker over 1.1, one multiplexed over 2")
	concurrency := set.Int("concurrency", 1, "workers")
	total := set.Int("total", 100, "calls in all")
	timeout := set.Duration("timeout", 120*time.Second, "deadline of each call")
	connections := set.String("connections", "1", "connections the workers share (1 to -concurrency), or per-call")
	if err := parse(set, args, target); err != nil {
		return nil, err
	}
	if *concurrency < 1 || *total < *concurrency {
		return nil, fmt.Errorf("call: need 1 <= -concurrency <= -total, got %d and %d", *concurrency, *total)
	}
	spec := callSpec{*method, *bucket, uint32(*batch), uint32(*delay), uint32(*work), uint32(*replyBytes), uint32(*requestBytes)}
	if _, err := caller(nil, spec); err != nil {
		return nil, err
	}
	var (
		perWorker func(int) func(context.Context) error
		closeAll  func()
		err       error
	)
	if *httpVersion != "" {
		perWorker, closeAll, err = restCallers(*target, *httpVersion, *connections, *concurrency, *timeout, spec)
	} else {
		perWorker, closeAll, err = workerCallers(*target, *connections, *concurrency, spec)
	}
	if err != nil {
		return nil, err
	}
	defer closeAll()
	var (
		issued   atomic.Int64
		record   recorder
		workers  sync.WaitGroup
		begun    = time.Now()
		calls    = int64(*total)
		deadline = *timeout
	)
	for worker := range *concurrency {
		call := perWorker(worker)
		workers.Add(1)
		go func() {
			defer workers.Done()
			for issued.Add(1) <= calls {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				started := time.Now()
				err := call(ctx)
				record.add(time.Since(started), err)
				cancel()
			}
		}()
	}
	workers.Wait()
	options := map[string]any{
		"method": *method, "concurrency": *concurrency, "total": *total, "batch": *batch, "delay_ms": *delay,
		"connections": *connections, "work": *work, "reply_bytes": *replyBytes, "http": *httpVersion,
		"request_bytes": *requestBytes,
	}
	return record.summary(time.Since(begun), options), nil
}

// workerCallers gives each worker its call: on connection worker mod N of N shared ones, or, for
// "per-call", on a connection dialled for that call alone and closed when it ends.
func workerCallers(
	target, connections string, concurrency int, spec callSpec,
) (perWorker func(int) func(context.Context) error, closeAll func(), err error) {
	if connections == "per-call" {
		call := func(ctx context.Context) error {
			conn, err := dial(target)
			if err != nil {
				return err
			}
			defer conn.Close()
			once, _ := caller(conn, spec) // the method was checked before
			return once(ctx)
		}
		return func(int) func(context.Context) error { return call }, func() {}, nil
	}
	n, err := strconv.Atoi(connections)
	if err != nil || n < 1 || n > concurrency {
		return nil, nil, fmt.Errorf("call: -connections is 1 to -concurrency (%d) or per-call, got %q", concurrency, connections)
	}
	conns, closeAll, err := dialEach(target, n)
	if err != nil {
		return nil, nil, err
	}
	calls := make([]func(context.Context) error, n)
	for i, conn := range conns {
		calls[i], _ = caller(conn, spec)
	}
	return func(worker int) func(context.Context) error { return calls[worker%n] }, closeAll, nil
}

// callSpec is what every call of a run asks: the RPC, and its request's fields.
type callSpec struct {
	method, bucket                               string
	batch, delay, work, replyBytes, requestBytes uint32
}

// restCallers gives each worker REST's hello (GET /v1/hello), on the connections the HTTP version holds: one
// per worker over HTTP/1.1, one shared over HTTP/2. A call is OK when the answer is 200 and read to its end.
func restCallers(
	target, version, connections string, concurrency int, timeout time.Duration, spec callSpec,
) (perWorker func(int) func(context.Context) error, closeAll func(), err error) {
	if spec.method != "hello" || spec.delay != 0 || spec.requestBytes != 0 || connections != "1" {
		return nil, nil, fmt.Errorf("call: -http calls hello alone (a GET), with no -delay-ms, -request-bytes or -connections")
	}
	client, err := restClient(version, concurrency, timeout)
	if err != nil {
		return nil, nil, err
	}
	url := fmt.Sprintf("%s%s/v1/hello?name=loadgen&work=%d&reply_bytes=%d", scheme(), target, spec.work, spec.replyBytes)
	call := func(ctx context.Context) error {
		request, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		status, data, err := exchange(client, request)
		if err == nil && status != http.StatusOK {
			err = httpError{fmt.Sprintf("HTTP %d", status), string(data)}
		}
		return err
	}
	return func(int) func(context.Context) error { return call }, client.CloseIdleConnections, nil
}

// caller is one call of the named RPC; a stream counts as one call, read to its end.
func caller(conn *grpc.ClientConn, spec callSpec) (func(context.Context) error, error) {
	greeter, store := pb.NewGreeterClient(conn), pb.NewObjectStoreClient(conn)
	method, bucket, batch := spec.method, spec.bucket, spec.batch
	hello, err := helloRequest(spec)
	if err != nil {
		return nil, err
	}
	switch method {
	case "hello":
		return func(ctx context.Context) error {
			_, err := greeter.SayHello(ctx, hello)
			return err
		}, nil
	case "hello-stream":
		return func(ctx context.Context) error {
			stream, err := greeter.SayHelloStream(ctx, hello)
			if err != nil {
				return err
			}
			return drain(stream.Recv)
		}, nil
	case "list-objects":
		if bucket == "" {
			return nil, fmt.Errorf("call: list-objects needs -bucket")
		}
		request := &pb.ListObjectsRequest{Bucket: bucket}
		return func(ctx context.Context) error {
			_, err := store.ListObjects(ctx, request)
			return err
		}, nil
	case "stream-objects":
		if bucket == "" {
			return nil, fmt.Errorf("call: stream-objects needs -bucket")
		}
		request := &pb.ListObjectsRequest{Bucket: bucket, BatchSize: batch}
		return func(ctx context.Context) error {
			stream, err := store.StreamObjects(ctx, request)
			if err != nil {
				return err
			}
			return drain(stream.Recv)
		}, nil
	}
	return nil, fmt.Errorf("call: unknown -method %q: hello, hello-stream, list-objects or stream-objects", method)
}

// helloRequests holds one SayHello request a callSpec, marshalled once (`frozen`), however many connections or
// calls (one a connection, over per-call) send it.
var helloRequests sync.Map

func helloRequest(spec callSpec) (*pb.HelloRequest, error) {
	if found, ok := helloRequests.Load(spec); ok {
		return found.(*pb.HelloRequest), nil
	}
	made, err := frozen(&pb.HelloRequest{
		Name: "loadgen", DelayMs: spec.delay, Work: spec.work, ReplyBytes: spec.replyBytes,
		Payload: make([]byte, spec.requestBytes),
	})
	if err != nil {
		return nil, err
	}
	found, _ := helloRequests.LoadOrStore(spec, made)
	return found.(*pb.HelloRequest), nil
}

// drain reads a server stream to its end; nil when it ended with OK.
func drain[T any](receive func() (T, error)) error {
	for {
		if _, err := receive(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}
