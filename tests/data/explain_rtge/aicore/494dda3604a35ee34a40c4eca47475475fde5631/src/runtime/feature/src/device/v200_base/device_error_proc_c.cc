







































































































































































static const std::map<uint64_t, std::string> g_davidErrorMapInfo = {
    // RINGBUFFER_CUBE_ERROR_0_OFFSET
    {CUBE_INVLD_INPUT, "the data of L0a and L0b read back is the INF or NAN data."},
    {CUBE_L0A_WRAP_AROUND, "The operation address of L0A exceeds the maximum range of L0A."},
    {CUBE_L0B_WRAP_AROUND, "The operation address of L0B exceeds the maximum range of L0B."},
    {CUBE_L0C_WRAP_AROUND, "The operation address of L0C exceeds the maximum range of L0C."},
    {CUBE_L0A_ECC, "ECC verification failed when L0A read/write."},
    {CUBE_L0B_ECC, "ECC verification failed when L0B read/write."},
    {CUBE_L0C_ECC, "ECC verification failed when L0C read/write."},
    {CUBE_ILLEGAL_INSTR, "The instruction configuration of CUBE is illegal."},
    {CUBE_ERR_HSET_CNT_OVF, "A overflow error occurs in the CUBE HSET counter."},
    {CUBE_ERR_HSET_CNT_UNF, "A underflow error occurs in the CUBE HSET counter."},
    {CUBE_ERR_PBUF_WRAP_AROUND, "A round error occurs in the CUBE FIXP_BUFFER."},
    {CUBE_ERR_PARITY_ERR, "Parity error for the Cube parity ERR register."},
    {CUBE_ERR_SF_ECC_MB_ERR, "Cube SF MEM failure."},

    // RINGBUFFER_MTE_ERROR_OFFSET
    {MTE_NDDMA_CACHE_ECC, "NDDMA Cache ECC ERROR."},
    {MTE_NDDMA_REG_BUF_ECC, "NDDMA REQ Buffer ECC ERROR."},
    {MTE_L1_ECC, "ECC verification failed when L1 read/write."},
    {MTE_CFG_REG_PARITY, "CFG REG PARIT ERROR."},
    {MTE_READ_OVERFLOW,
        "The read address of the mte load2d instruction is greater than the maximum address of the source (L1)."},
    {MTE_WRITE_OVERFLOW,
        "The write address of the mte load2d instruction is greater than the maximum destination address."},
    {MTE_ERR_INSTR_ILLEGAL_CFG, "The instruction configuration of MTE is illegal."},
    {MTE_ERR_ADDR_MISALIGN, "instruction address misalign(ADDR_MISALIGN)."},
    {VEC_INSTR_ADDR_MISALIGN, "The UB address accessed by the VEC instruction is not aligned."},
    {MTE_GDMA_READ_OVERFLOW, "The read address of the MTE instruction is out of range."},
    {MTE_GDMA_WRITE_OVERFLOW, "The write address of the MTE instruction is out of range."},
    {MTE_STB_ECC_ERR, "Multi-bit ECC error occurs in the MTE STB."},
    {MTE_TAGMGR_BUF_ECC, "Multi-bit ECC error occurs in the MTE tagmgr buffer."},
    {MTE_UB_ECC, "The ECC verification of the UB in the VEC failed."},
    {MTE_ROB_ECC, "An error occurs in the mte ROB ECC check."},
    {MTE_BIU_RDWR_RESP, "The DDR address of the MTE instruction is out of range."},

    // RINGBUFFER_L1_ERROR_OFFSET
    {L1_L0A_RDWR_CFLT, "L0A MEM read/write conflict(L0A_RDWR_CFLT)."},
    {L1_L0B_RDWR_CFLT, "L0B MEM read/write conflict(L0B_RDWR_CFLT)."},
    {L1_READ_2D_OVERFLOW, "LOAD2D instruction address overflow (READ_OVERFLOW)."},
    {L1_WRITE_2D_OVERFLOW, "LOAD2D instruction address overflow(WRITE_OVERFLOW)."},
    {MTE_ERR_ILLEGAL_CHN_SIZE, "The value of CHN_SIZE is illegal."},
    {MTE_ERR_ILLEGAL_K_M_EXT_STEP, "The value of K_M_EXT_STEP is illegal."},
    {MTE_ERR_ILLEGAL_K_M_START_POS, "The value of K_M_START_POS is illegal."},
    {MTE_ILLEGAL_FM_SIZE, "The feature map size of the mte load3d instruction is illegal(size = 0)."},
    {MTE_ILLEGAL_STRIDE, "The stride size of the mte load3d instruction is illegal."},
    {MTE_PADDING_CFG, "The error in mte load3d padding configuration."},
    {MTE_ERR_READ_3D_OVERFLOW, "The read address of the MTE load3d instruction is out of range."},
    {MTE_WRITE_3D_OVERFLOW, "The write address of the mte load3d instruction is out of range."},
    {MTE_F1WPOS_LARGER_FSIZE,
        "The 1st filter window position of the mte load3d instruction is greater than "
        "(Feature map size – Filter size)."},
    {MTE_FMAP_LESS_KERNEL, "The feature map size of the mte load3d instruction is less than the kernel size."},
    {MTE_FMAPWH_LARGER_L1SIZE,
        "FeatureMapW * FeatureMapH * (CIndex + 1) of the mte load3d instruction is greater than L1 buffer size/32."},
    {MTE_FPOS_LARGER_FSIZE,
        "The fetch position in filter of the mte load3d instruction is greater than the filter size."},

    // RINGBUFFER_L1_ERROR_1_OFFSET
    {FIXP_ERR_FBUF_WRITE_OVFLW, "The write address of the FBUF is out of range."},
    {FIXP_ERR_FBUF_READ_OVFLW, "The read address of the FBUF is out of range."},
    {FIXP_ERR_OUT_WRITE_OVERFLOW, "A overflow error occurs when the FIXP write."},
    {FIXP_ERR_WRITE_L1_OVFLW, "The write address of the L1 is out of range."},
    {FIXP_ERR_READ_L1_OVFLW, "The read address of the L1 is out of range."},
    {FIXP_ERR_READ_L0C_OVFLW, "The read address of the L0C is out of range."},
    {FIXP_ERR_ILLEGAL_CFG, "The configuration of FIXP is illegal."},
    {FIXP_ERR_INSTR_ADDR_MISAL, "Read L0C, read L1, and write FIXP buffer addresses are not aligned."},
    {FIXP_L0C_ECC, "FIXP instruction error: ECC verification failed when the l0c is read."},
    {FIXP_L0C_RDWR_CFLT, "L0C read/write conflict."},
    {FIXP_ERR_WRITE_UB_OVFLW, "The write address of the UB is out of range."},
    {L1_UB_WR_OVFLW, "L1 to UB write overflow(UB_WR_OVERFLOW)."},
    {L1_WAITSET_ERR, "The configuration of HWATI/HSET is incorrect."},
    {L1_L1_ECC, "L1 MEM 2bits ECC error(L1_ECC)."},
    {L1_GDMA_READ_OVERFLOW, "The read address of the MTE instruction is out of range."},
    {L1_GDMA_WRITE_OVERFLOW, "The write address of the MTE instruction is out of range."},
    {L1_INSTR_ILLEGAL_CFG, "instruction illegal config(INSTR_ILLEGAL_CFG)"},
    {L1_INSTR_ADDR_MISALIGN, "Instruction address misalign."},

    // RINGBUFFER_SU_ERROR_OFFSET
    {IFU_BUS_ERR, "it is usually instruction errors. The probability is low."},
    {CCU_CALL_DEPTH_OVRFLW, "The number of nesting times of call the function is greater than CTRL[5:2]."},
    {CCU_DIV0, "divide by zero."},
    {CCU_ILLEGAL_INSTR, "Illegal instruction, which is usually caused by unaligned UUB addresses."},
    {CCU_NEG_SQRT, "The number of roots is negative. "},
    {CCU_UB_ECC, "ECC verification failed when UB read/write."},
    {CCU_INF_NAN, "The input of the floating-point instruction run by the CCU is nan/inf."},
    {CCU_ADDR_ERR, "CCU instruction address check error."},
    {CCU_BUS_ERR,
        "When the D-cache reads and writes data to the UB, the response value returned by the bus is a non-zero "
        "value."},
    {CCU_DC_DATA_ECC, "A 2-bit ECC error occurs in the data-cache data-ram."},
    {CCU_DC_TAG_ECC, "A 2-bit ECC error occurs in the data-cache tag-ram."},
    {CCU_DIV0_FP, "A error occurs in the FP32 DIV0."},
    {CCU_NEG_SQRT_FP, "The input of the FP SQRT calculation unit is a negative number."},
    {CCU_ERR_PARITY_ERR, "A parity check error occurs in the SU internal buffer during the safety feature."},
    {CCU_SEQ_ERR, "The SEQ command sequence is incorrect."},
    {CCU_MPU_ERR, "The MPU address access is invalid."},
    {CCU_LSU_ERR, "When the buffer is enabled, the stack access instruction cache is miss."},
    {CCU_PB_ECC_ERR, "A 2-bit ECC error occurs in the parameter buffer."},
    {CCU_SAFETY_CRC_ERR, "MTE CRC error."},
    {CCU_LSU_ATOMIC_ERR, "Failed to execute atomic on the Scalar LSU."},
    {CCU_CROSS_CORE_SET_OVFL_ERR,
        "The value of the flag counter for inter-core communication exceeds the maximum value 15."},
    {SU_SAFETY_1BIT_ECC_OVFLW_ERR_T0, "Overflow error when the number of 1-bit ECC errors exceeds the preset value."},
    {CCU_SBUF_ECC, "ECC is reported in the CCU Scalar buffer."},
    {SU_HIT_TRAP_ERR, "trap instr error."},
    {WARN_AS_EXCEPTION_T0,
        "An exception is reported when the task ends, because more than 15 1-bit ECC errors or IFU multi-hit events "
        "occur during task running."},

    // sc error
    {SC_BUS_RESP_TIMEOUT_ERR,
        "Timeout when the slave bus accesses the SC and no response is received for a long time."},

    // RINGBUFFER_VEC_ERROR_OFFSET
    {VEC_DATA_EXCP_MTE, "Data from the MTE is abnormal."},
    {VEC_DATA_EXCP_CCU, "Data from the CCU is abnormal."},
    {VEC_DATA_EXCP_VEC, "Data from the VEC is abnormal."},
    {VEC_INSTR_TIMEOUT, "The instruction running timeout."},
    {VEC_ERR_SU_PLD_UNDEF, "ccu payload undefine."},
    {VEC_ERR_SU_PLD_ILL_CFG, "ccu payload illegal congifuration."},
    {VEC_ERR_PC_OVFL_T0, "VF PC overflow."},
    {VEC_INSTR_UNDEF, "Commands not supported by the current VEC version."},
    {VEC_INSTR_ILLEGAL_CFG, "VEC supports illegal configurations in commands."},
    {VEC_ERR_HWLP_STACK_OVFL_T0, "The number of nested VLOOPs exceeds the hardware limit (4)."},
    {VEC_ERR_HWLP_INSTR_NUM_MISMATCH_T0,
        "The number of instructions in the nested VLOOPs is greater than that in the outer loop."},
    {VEC_BIU_RESP_ERR, "The data returned by the BIU to the VEC is incorrect."},
    {VEC_PB_ECC_MBERR, "The PB data returned by the SU to the VEC contains ECC errors."},
    {VEC_IDATA_INF_NAN, "The input data of the instruction operation is INF/NAN."},
    {VEC_DIV_BY_ZERO, "The instruction of VEC divide-by-zero error."},
    {VEC_VALU_NEG_LN, "The input data of the VALU lN operation is a negative number."},
    {VEC_VALU_NEG_SQRT, "The input data of the VALU squart operation is a negative number."},
    {VEC_INSTR_MISALIGN, "The instruction access UB address is not aligned."},
    {VEC_ERR_UB_ADDR_OVERFLOW, "UB access address overflow."},
    {VEC_UB_ECC_MBERR, "Multi-bit ECC error occurs when access UB."},
    {VEC_ERR_VMS_UNSORT_T0, "Incorrectly sorted data entered by the VMS."},
    {VEC_ERR_CSW_DATA_T0, "Exception when accessing the internal SRAM during context switch (multi-bit ECC)."},
    // RINGBUFFER_VEC_ERROR_1_OFFSET
    {VEC_ERR_UNEXP_JOIN_T0,
        "When the VEC executes a SIMT task, some warps end with \"join\" and some warps end with \"end\"."},
    {VEC_ERR_UB_SIZE_CFG_ERR_T0, "The configured UB size exceeds 224 KB, and the DCU AGU is aware of it."},
    {VEC_ERR_DC_STACK_ADDR_OVFL_T0, "The DCache access address exceeds the maximum range of the DCache stack MEM."},
    {VEC_ERR_GM_ADDR_OVFL_T0, "The DCache access address exceeds the maximum range of the GM MEM."},
    {VEC_ERR_DVG_STACK_OVFL_T0, "Overflow error in the DVG stack."},
    {VEC_ERR_DVG_STACK_UNDFL_T0, "Underflow error in the DVG stack."},
    {VEC_ERR_BHU_ECC_MBERR_T0, "Multi-bit ECC error when the VEC accesses the BHU."},
    {VEC_ERR_MROB_ECC_MBERR_T0, "Multi-bit ECC error when the VEC accesses the MROB."},
    {VEC_ERR_DCACHE_TAG_MBERR_T0, "Multi-bit ECC error when the VEC accesses the DCache"},
    {VEC_ERR_DIRTY_ECC_MBERR_T0, "Multi-bit ECC error when the VEC accesses the dirty MEM."},
    {VEC_ERR_VTH_ID_ECC_MBERR_T0, "Multi-bit ECC error when the VEC accesses the Vthread ID."},
    {VEC_ERR_MRF_ECC_MBERR_T0, "Multi-bit ECC error when the VEC accesses the MRF."},
    {VEC_ERR_DVG_ECC_MBERR_T0, "Multi-bit ECC error when the VEC accesses the DVG stack."},
};

























































    errorString = "timeout or trap error.";


































































































































































































































































































































































































































































































































