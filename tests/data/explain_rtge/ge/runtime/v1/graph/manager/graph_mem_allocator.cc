  } else {
    const aclError rt_ret = ge::AclrtMalloc(&memory_addr, memory_size, memory_type_, GE_MODULE_NAME_U16);
    if (rt_ret != ACL_SUCCESS) {
      memory_addr = nullptr;
    }
  }

  if (memory_addr == nullptr) {
    REPORT_INNER_ERR_MSG("E19999", "Call aclrtMalloc fail, purpose:%s, size:%zu, device_id:%u", purpose.c_str(),
                         memory_size, device_id);
    GELOGE(ge::INTERNAL_ERROR, "[Malloc][Memory] failed, device_id = %u, size= %" PRIu64, device_id, memory_size);

    return static_cast<uint8_t *>(memory_addr);
  }
