export interface ReloadPolicyRequest {
}
export interface ReloadPolicyRequest__Output {
}
