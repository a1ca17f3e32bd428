// Original file: proto/toolgate/v1/audit.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CheckpointRequest as _toolgate_v1_CheckpointRequest, CheckpointRequest__Output as _toolgate_v1_CheckpointRequest__Output } from '../../toolgate/v1/CheckpointRequest.js';
import type { CheckpointResponse as _toolgate_v1_CheckpointResponse, CheckpointResponse__Output as _toolgate_v1_CheckpointResponse__Output } from '../../toolgate/v1/CheckpointResponse.js';
import type { ConsistencyProofRequest as _toolgate_v1_ConsistencyProofRequest, ConsistencyProofRequest__Output as _toolgate_v1_ConsistencyProofRequest__Output } from '../../toolgate/v1/ConsistencyProofRequest.js';
import type { ConsistencyProofResponse as _toolgate_v1_ConsistencyProofResponse, ConsistencyProofResponse__Output as _toolgate_v1_ConsistencyProofResponse__Output } from '../../toolgate/v1/ConsistencyProofResponse.js';
import type { CsvChunk as _toolgate_v1_CsvChunk, CsvChunk__Output as _toolgate_v1_CsvChunk__Output } from '../../toolgate/v1/CsvChunk.js';
import type { Event as _toolgate_v1_Event, Event__Output as _toolgate_v1_Event__Output } from '../../toolgate/v1/Event.js';
import type { ExportRequest as _toolgate_v1_ExportRequest, ExportRequest__Output as _toolgate_v1_ExportRequest__Output } from '../../toolgate/v1/ExportRequest.js';
import type { HashArgsRequest as _toolgate_v1_HashArgsRequest, HashArgsRequest__Output as _toolgate_v1_HashArgsRequest__Output } from '../../toolgate/v1/HashArgsRequest.js';
import type { HashArgsResponse as _toolgate_v1_HashArgsResponse, HashArgsResponse__Output as _toolgate_v1_HashArgsResponse__Output } from '../../toolgate/v1/HashArgsResponse.js';
import type { HeadRequest as _toolgate_v1_HeadRequest, HeadRequest__Output as _toolgate_v1_HeadRequest__Output } from '../../toolgate/v1/HeadRequest.js';
import type { HeadResponse as _toolgate_v1_HeadResponse, HeadResponse__Output as _toolgate_v1_HeadResponse__Output } from '../../toolgate/v1/HeadResponse.js';
import type { InclusionProofRequest as _toolgate_v1_InclusionProofRequest, InclusionProofRequest__Output as _toolgate_v1_InclusionProofRequest__Output } from '../../toolgate/v1/InclusionProofRequest.js';
import type { InclusionProofResponse as _toolgate_v1_InclusionProofResponse, InclusionProofResponse__Output as _toolgate_v1_InclusionProofResponse__Output } from '../../toolgate/v1/InclusionProofResponse.js';
import type { QueryRequest as _toolgate_v1_QueryRequest, QueryRequest__Output as _toolgate_v1_QueryRequest__Output } from '../../toolgate/v1/QueryRequest.js';
import type { QueryResponse as _toolgate_v1_QueryResponse, QueryResponse__Output as _toolgate_v1_QueryResponse__Output } from '../../toolgate/v1/QueryResponse.js';
import type { StatsRequest as _toolgate_v1_StatsRequest, StatsRequest__Output as _toolgate_v1_StatsRequest__Output } from '../../toolgate/v1/StatsRequest.js';
import type { StatsResponse as _toolgate_v1_StatsResponse, StatsResponse__Output as _toolgate_v1_StatsResponse__Output } from '../../toolgate/v1/StatsResponse.js';
import type { SubscribeRequest as _toolgate_v1_SubscribeRequest, SubscribeRequest__Output as _toolgate_v1_SubscribeRequest__Output } from '../../toolgate/v1/SubscribeRequest.js';
import type { TlogProofRequest as _toolgate_v1_TlogProofRequest, TlogProofRequest__Output as _toolgate_v1_TlogProofRequest__Output } from '../../toolgate/v1/TlogProofRequest.js';
import type { TlogProofResponse as _toolgate_v1_TlogProofResponse, TlogProofResponse__Output as _toolgate_v1_TlogProofResponse__Output } from '../../toolgate/v1/TlogProofResponse.js';
import type { VerifyRequest as _toolgate_v1_VerifyRequest, VerifyRequest__Output as _toolgate_v1_VerifyRequest__Output } from '../../toolgate/v1/VerifyRequest.js';
import type { VerifyResponse as _toolgate_v1_VerifyResponse, VerifyResponse__Output as _toolgate_v1_VerifyResponse__Output } from '../../toolgate/v1/VerifyResponse.js';

export interface AuditClient extends grpc.Client {
  Checkpoint(argument: _toolgate_v1_CheckpointRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_CheckpointResponse__Output>): grpc.ClientUnaryCall;
  Checkpoint(argument: _toolgate_v1_CheckpointRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_CheckpointResponse__Output>): grpc.ClientUnaryCall;
  Checkpoint(argument: _toolgate_v1_CheckpointRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_CheckpointResponse__Output>): grpc.ClientUnaryCall;
  Checkpoint(argument: _toolgate_v1_CheckpointRequest, callback: grpc.requestCallback<_toolgate_v1_CheckpointResponse__Output>): grpc.ClientUnaryCall;
  checkpoint(argument: _toolgate_v1_CheckpointRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_CheckpointResponse__Output>): grpc.ClientUnaryCall;
  checkpoint(argument: _toolgate_v1_CheckpointRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_CheckpointResponse__Output>): grpc.ClientUnaryCall;
  checkpoint(argument: _toolgate_v1_CheckpointRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_CheckpointResponse__Output>): grpc.ClientUnaryCall;
  checkpoint(argument: _toolgate_v1_CheckpointRequest, callback: grpc.requestCallback<_toolgate_v1_CheckpointResponse__Output>): grpc.ClientUnaryCall;
  
  ConsistencyProof(argument: _toolgate_v1_ConsistencyProofRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ConsistencyProofResponse__Output>): grpc.ClientUnaryCall;
  ConsistencyProof(argument: _toolgate_v1_ConsistencyProofRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ConsistencyProofResponse__Output>): grpc.ClientUnaryCall;
  ConsistencyProof(argument: _toolgate_v1_ConsistencyProofRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ConsistencyProofResponse__Output>): grpc.ClientUnaryCall;
  ConsistencyProof(argument: _toolgate_v1_ConsistencyProofRequest, callback: grpc.requestCallback<_toolgate_v1_ConsistencyProofResponse__Output>): grpc.ClientUnaryCall;
  consistencyProof(argument: _toolgate_v1_ConsistencyProofRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ConsistencyProofResponse__Output>): grpc.ClientUnaryCall;
  consistencyProof(argument: _toolgate_v1_ConsistencyProofRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ConsistencyProofResponse__Output>): grpc.ClientUnaryCall;
  consistencyProof(argument: _toolgate_v1_ConsistencyProofRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ConsistencyProofResponse__Output>): grpc.ClientUnaryCall;
  consistencyProof(argument: _toolgate_v1_ConsistencyProofRequest, callback: grpc.requestCallback<_toolgate_v1_ConsistencyProofResponse__Output>): grpc.ClientUnaryCall;
  
  ExportCsv(argument: _toolgate_v1_ExportRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_toolgate_v1_CsvChunk__Output>;
  ExportCsv(argument: _toolgate_v1_ExportRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_toolgate_v1_CsvChunk__Output>;
  exportCsv(argument: _toolgate_v1_ExportRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_toolgate_v1_CsvChunk__Output>;
  exportCsv(argument: _toolgate_v1_ExportRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_toolgate_v1_CsvChunk__Output>;
  
  HashArgs(argument: _toolgate_v1_HashArgsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_HashArgsResponse__Output>): grpc.ClientUnaryCall;
  HashArgs(argument: _toolgate_v1_HashArgsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_HashArgsResponse__Output>): grpc.ClientUnaryCall;
  HashArgs(argument: _toolgate_v1_HashArgsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_HashArgsResponse__Output>): grpc.ClientUnaryCall;
  HashArgs(argument: _toolgate_v1_HashArgsRequest, callback: grpc.requestCallback<_toolgate_v1_HashArgsResponse__Output>): grpc.ClientUnaryCall;
  hashArgs(argument: _toolgate_v1_HashArgsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_HashArgsResponse__Output>): grpc.ClientUnaryCall;
  hashArgs(argument: _toolgate_v1_HashArgsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_HashArgsResponse__Output>): grpc.ClientUnaryCall;
  hashArgs(argument: _toolgate_v1_HashArgsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_HashArgsResponse__Output>): grpc.ClientUnaryCall;
  hashArgs(argument: _toolgate_v1_HashArgsRequest, callback: grpc.requestCallback<_toolgate_v1_HashArgsResponse__Output>): grpc.ClientUnaryCall;
  
  Head(argument: _toolgate_v1_HeadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_HeadResponse__Output>): grpc.ClientUnaryCall;
  Head(argument: _toolgate_v1_HeadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_HeadResponse__Output>): grpc.ClientUnaryCall;
  Head(argument: _toolgate_v1_HeadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_HeadResponse__Output>): grpc.ClientUnaryCall;
  Head(argument: _toolgate_v1_HeadRequest, callback: grpc.requestCallback<_toolgate_v1_HeadResponse__Output>): grpc.ClientUnaryCall;
  head(argument: _toolgate_v1_HeadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_HeadResponse__Output>): grpc.ClientUnaryCall;
  head(argument: _toolgate_v1_HeadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_HeadResponse__Output>): grpc.ClientUnaryCall;
  head(argument: _toolgate_v1_HeadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_HeadResponse__Output>): grpc.ClientUnaryCall;
  head(argument: _toolgate_v1_HeadRequest, callback: grpc.requestCallback<_toolgate_v1_HeadResponse__Output>): grpc.ClientUnaryCall;
  
  InclusionProof(argument: _toolgate_v1_InclusionProofRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_InclusionProofResponse__Output>): grpc.ClientUnaryCall;
  InclusionProof(argument: _toolgate_v1_InclusionProofRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_InclusionProofResponse__Output>): grpc.ClientUnaryCall;
  InclusionProof(argument: _toolgate_v1_InclusionProofRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_InclusionProofResponse__Output>): grpc.ClientUnaryCall;
  InclusionProof(argument: _toolgate_v1_InclusionProofRequest, callback: grpc.requestCallback<_toolgate_v1_InclusionProofResponse__Output>): grpc.ClientUnaryCall;
  inclusionProof(argument: _toolgate_v1_InclusionProofRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_InclusionProofResponse__Output>): grpc.ClientUnaryCall;
  inclusionProof(argument: _toolgate_v1_InclusionProofRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_InclusionProofResponse__Output>): grpc.ClientUnaryCall;
  inclusionProof(argument: _toolgate_v1_InclusionProofRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_InclusionProofResponse__Output>): grpc.ClientUnaryCall;
  inclusionProof(argument: _toolgate_v1_InclusionProofRequest, callback: grpc.requestCallback<_toolgate_v1_InclusionProofResponse__Output>): grpc.ClientUnaryCall;
  
  Query(argument: _toolgate_v1_QueryRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_QueryResponse__Output>): grpc.ClientUnaryCall;
  Query(argument: _toolgate_v1_QueryRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_QueryResponse__Output>): grpc.ClientUnaryCall;
  Query(argument: _toolgate_v1_QueryRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_QueryResponse__Output>): grpc.ClientUnaryCall;
  Query(argument: _toolgate_v1_QueryRequest, callback: grpc.requestCallback<_toolgate_v1_QueryResponse__Output>): grpc.ClientUnaryCall;
  query(argument: _toolgate_v1_QueryRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_QueryResponse__Output>): grpc.ClientUnaryCall;
  query(argument: _toolgate_v1_QueryRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_QueryResponse__Output>): grpc.ClientUnaryCall;
  query(argument: _toolgate_v1_QueryRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_QueryResponse__Output>): grpc.ClientUnaryCall;
  query(argument: _toolgate_v1_QueryRequest, callback: grpc.requestCallback<_toolgate_v1_QueryResponse__Output>): grpc.ClientUnaryCall;
  
  Stats(argument: _toolgate_v1_StatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_StatsResponse__Output>): grpc.ClientUnaryCall;
  Stats(argument: _toolgate_v1_StatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_StatsResponse__Output>): grpc.ClientUnaryCall;
  Stats(argument: _toolgate_v1_StatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_StatsResponse__Output>): grpc.ClientUnaryCall;
  Stats(argument: _toolgate_v1_StatsRequest, callback: grpc.requestCallback<_toolgate_v1_StatsResponse__Output>): grpc.ClientUnaryCall;
  stats(argument: _toolgate_v1_StatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_StatsResponse__Output>): grpc.ClientUnaryCall;
  stats(argument: _toolgate_v1_StatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_StatsResponse__Output>): grpc.ClientUnaryCall;
  stats(argument: _toolgate_v1_StatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_StatsResponse__Output>): grpc.ClientUnaryCall;
  stats(argument: _toolgate_v1_StatsRequest, callback: grpc.requestCallback<_toolgate_v1_StatsResponse__Output>): grpc.ClientUnaryCall;
  
  Subscribe(argument: _toolgate_v1_SubscribeRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_toolgate_v1_Event__Output>;
  Subscribe(argument: _toolgate_v1_SubscribeRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_toolgate_v1_Event__Output>;
  subscribe(argument: _toolgate_v1_SubscribeRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_toolgate_v1_Event__Output>;
  subscribe(argument: _toolgate_v1_SubscribeRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_toolgate_v1_Event__Output>;
  
  TlogProof(argument: _toolgate_v1_TlogProofRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_TlogProofResponse__Output>): grpc.ClientUnaryCall;
  TlogProof(argument: _toolgate_v1_TlogProofRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_TlogProofResponse__Output>): grpc.ClientUnaryCall;
  TlogProof(argument: _toolgate_v1_TlogProofRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_TlogProofResponse__Output>): grpc.ClientUnaryCall;
  TlogProof(argument: _toolgate_v1_TlogProofRequest, callback: grpc.requestCallback<_toolgate_v1_TlogProofResponse__Output>): grpc.ClientUnaryCall;
  tlogProof(argument: _toolgate_v1_TlogProofRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_TlogProofResponse__Output>): grpc.ClientUnaryCall;
  tlogProof(argument: _toolgate_v1_TlogProofRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_TlogProofResponse__Output>): grpc.ClientUnaryCall;
  tlogProof(argument: _toolgate_v1_TlogProofRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_TlogProofResponse__Output>): grpc.ClientUnaryCall;
  tlogProof(argument: _toolgate_v1_TlogProofRequest, callback: grpc.requestCallback<_toolgate_v1_TlogProofResponse__Output>): grpc.ClientUnaryCall;
  
  Verify(argument: _toolgate_v1_VerifyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_VerifyResponse__Output>): grpc.ClientUnaryCall;
  Verify(argument: _toolgate_v1_VerifyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_VerifyResponse__Output>): grpc.ClientUnaryCall;
  Verify(argument: _toolgate_v1_VerifyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_VerifyResponse__Output>): grpc.ClientUnaryCall;
  Verify(argument: _toolgate_v1_VerifyRequest, callback: grpc.requestCallback<_toolgate_v1_VerifyResponse__Output>): grpc.ClientUnaryCall;
  verify(argument: _toolgate_v1_VerifyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_VerifyResponse__Output>): grpc.ClientUnaryCall;
  verify(argument: _toolgate_v1_VerifyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_VerifyResponse__Output>): grpc.ClientUnaryCall;
  verify(argument: _toolgate_v1_VerifyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_VerifyResponse__Output>): grpc.ClientUnaryCall;
  verify(argument: _toolgate_v1_VerifyRequest, callback: grpc.requestCallback<_toolgate_v1_VerifyResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface AuditHandlers extends grpc.UntypedServiceImplementation {
  Checkpoint: grpc.handleUnaryCall<_toolgate_v1_CheckpointRequest__Output, _toolgate_v1_CheckpointResponse>;
  
  ConsistencyProof: grpc.handleUnaryCall<_toolgate_v1_ConsistencyProofRequest__Output, _toolgate_v1_ConsistencyProofResponse>;
  
  ExportCsv: grpc.handleServerStreamingCall<_toolgate_v1_ExportRequest__Output, _toolgate_v1_CsvChunk>;
  
  HashArgs: grpc.handleUnaryCall<_toolgate_v1_HashArgsRequest__Output, _toolgate_v1_HashArgsResponse>;
  
  Head: grpc.handleUnaryCall<_toolgate_v1_HeadRequest__Output, _toolgate_v1_HeadResponse>;
  
  InclusionProof: grpc.handleUnaryCall<_toolgate_v1_InclusionProofRequest__Output, _toolgate_v1_InclusionProofResponse>;
  
  Query: grpc.handleUnaryCall<_toolgate_v1_QueryRequest__Output, _toolgate_v1_QueryResponse>;
  
  Stats: grpc.handleUnaryCall<_toolgate_v1_StatsRequest__Output, _toolgate_v1_StatsResponse>;
  
  Subscribe: grpc.handleServerStreamingCall<_toolgate_v1_SubscribeRequest__Output, _toolgate_v1_Event>;
  
  TlogProof: grpc.handleUnaryCall<_toolgate_v1_TlogProofRequest__Output, _toolgate_v1_TlogProofResponse>;
  
  Verify: grpc.handleUnaryCall<_toolgate_v1_VerifyRequest__Output, _toolgate_v1_VerifyResponse>;
  
}

export interface AuditDefinition extends grpc.ServiceDefinition {
  Checkpoint: MethodDefinition<_toolgate_v1_CheckpointRequest, _toolgate_v1_CheckpointResponse, _toolgate_v1_CheckpointRequest__Output, _toolgate_v1_CheckpointResponse__Output>
  ConsistencyProof: MethodDefinition<_toolgate_v1_ConsistencyProofRequest, _toolgate_v1_ConsistencyProofResponse, _toolgate_v1_ConsistencyProofRequest__Output, _toolgate_v1_ConsistencyProofResponse__Output>
  ExportCsv: MethodDefinition<_toolgate_v1_ExportRequest, _toolgate_v1_CsvChunk, _toolgate_v1_ExportRequest__Output, _toolgate_v1_CsvChunk__Output>
  HashArgs: MethodDefinition<_toolgate_v1_HashArgsRequest, _toolgate_v1_HashArgsResponse, _toolgate_v1_HashArgsRequest__Output, _toolgate_v1_HashArgsResponse__Output>
  Head: MethodDefinition<_toolgate_v1_HeadRequest, _toolgate_v1_HeadResponse, _toolgate_v1_HeadRequest__Output, _toolgate_v1_HeadResponse__Output>
  InclusionProof: MethodDefinition<_toolgate_v1_InclusionProofRequest, _toolgate_v1_InclusionProofResponse, _toolgate_v1_InclusionProofRequest__Output, _toolgate_v1_InclusionProofResponse__Output>
  Query: MethodDefinition<_toolgate_v1_QueryRequest, _toolgate_v1_QueryResponse, _toolgate_v1_QueryRequest__Output, _toolgate_v1_QueryResponse__Output>
  Stats: MethodDefinition<_toolgate_v1_StatsRequest, _toolgate_v1_StatsResponse, _toolgate_v1_StatsRequest__Output, _toolgate_v1_StatsResponse__Output>
  Subscribe: MethodDefinition<_toolgate_v1_SubscribeRequest, _toolgate_v1_Event, _toolgate_v1_SubscribeRequest__Output, _toolgate_v1_Event__Output>
  TlogProof: MethodDefinition<_toolgate_v1_TlogProofRequest, _toolgate_v1_TlogProofResponse, _toolgate_v1_TlogProofRequest__Output, _toolgate_v1_TlogProofResponse__Output>
  Verify: MethodDefinition<_toolgate_v1_VerifyRequest, _toolgate_v1_VerifyResponse, _toolgate_v1_VerifyRequest__Output, _toolgate_v1_VerifyResponse__Output>
}
