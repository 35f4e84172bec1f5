    }
    OP_CHECK_DTYPE_NOT_SUPPORT(self, selfSupportList, return false);
    bool isSupport = CheckType(dtype, supportList);
    // 检查参数dtype是否在Cast算子的输出数据类型支持列表内
    if (!isSupport) {
        OP_LOGE(
            ACLNN_ERR_PARAM_INVALID, "The param dtype not implemented for %s, should be in dtype support list %s.",
            op::ToString(dtype).GetString(), op::ToString(supportList).GetString());
        return false;
    }
    return true;
