#define OP_CHECK_DTYPE_NOT_SUPPORT(tensor, supportList, retExpr)                                                  \
    if (!CheckType(tensor->GetDataType(), supportList)) {                                                         \
        OP_LOGE(ACLNN_ERR_PARAM_INVALID, "Tensor %s not implemented for %s, should be in dtype support list %s.", \
                #tensor, op::ToString(tensor->GetDataType()).GetString(), op::ToString(supportList).GetString()); \
        retExpr;                                                                                                  \
    }

#define OP_CHECK_DTYPE_NOT_MATCH(tensor, expectedDtype, retExpr)                                           \
    if (tensor->GetDataType() != expectedDtype) {                                                          \
        OP_LOGE(ACLNN_ERR_PARAM_INVALID, "Tensor %s expected dtype is %s but found %s.", #tensor,          \
                op::ToString(expectedDtype).GetString(), op::ToString(tensor->GetDataType()).GetString()); \
        retExpr;                                                                                           \
    }
