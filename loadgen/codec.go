package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	pb "github.com/grpc-python-bench/loadgen/benchpb"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers the codec this one wraps
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// driverCodec is gRPC's proto codec, except where the driver's own copies would cost more than the server's work:
// a request frozen (`frozen`) is marshalled once and its bytes sent on every call; a HelloReply is checked, not
// decoded (every byte of it is read off the wire and its fields must parse, but its payload is not copied into a
// message no mode reads). With 1 MiB messages those copies, and the garbage they leave, were a third to a half of
// the driver's CPU per call; the bytes on the wire, and so the server's work, are the same.
type driverCodec struct{ encoding.CodecV2 }

// marshalled: each frozen request's bytes, by the request.
var marshalled sync.Map

// frozen marshals a request that every call sends unchanged, once; the request must not change after.
func frozen[M proto.Message](request M) (M, error) {
	data, err := proto.Marshal(request)
	if err != nil {
		return request, err
	}
	marshalled.Store(any(request), data)
	return request, nil
}

func (c driverCodec) Marshal(v any) (mem.BufferSlice, error) {
	if data, ok := marshalled.Load(v); ok {
		return mem.BufferSlice{mem.SliceBuffer(data.([]byte))}, nil // read, never written, by the transport
	}
	return c.CodecV2.Marshal(v)
}

func (c driverCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if _, ok := v.(*pb.HelloReply); !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return wellFormed(buf.ReadOnlyData())
}

// wellFormed: the bytes are a sequence of protobuf fields, each whole.
func wellFormed(message []byte) error {
	for len(message) > 0 {
		_, _, n := protowire.ConsumeField(message)
		if n < 0 {
			return fmt.Errorf("a reply that does not parse: %w", protowire.ParseError(n))
		}
		message = message[n:]
	}
	return nil
}

// gcPercent: Go's collector runs a quarter as often as by default (GOGC=400), unless GOGC is set. A MiB message
// a call is a MiB of garbage a call; the heap stays small, so collecting less often costs a little memory and
// saves the driver's CPU.
const gcPercent = 400

func init() {
	encoding.RegisterCodecV2(driverCodec{encoding.GetCodecV2("proto")})
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
