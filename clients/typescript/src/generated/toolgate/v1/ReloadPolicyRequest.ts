// Original file: proto/toolgate/v1/admin.proto


export interface ReloadPolicyRequest {
}

export interface ReloadPolicyRequest__Output {
}
