# cannenv smoke kernels: one CMake helper for both Ascend C build flows.
#
#   CANNENV_FLOW=legacy  CANN 7.0.0.alpha003 .. 8.x: ascendc.cmake / ascendc_library, with
#                        SOC_VERSION, ASCEND_CANN_PACKAGE_PATH and RUN_MODE (npu|sim|cpu)
#                        (research kernels.md §2a, [S-2024] npu_lib.cmake / cpu_lib.cmake).
#   CANNENV_FLOW=asc     CANN >= 9.0: find_package(ASC) + LANGUAGES ASC, --npu-arch=dav-XXXX from
#                        CMAKE_ASC_ARCHITECTURES, CMAKE_ASC_RUN_MODE (npu|sim|cpu) ([ASC]).
#
# The calling CMakeLists.txt has already called find_package(ASC) / project(); this file only adds
# targets. Written by us from the documented interface; it needs a CANN toolkit to configure.

set(CANNENV_SMOKE_COMMON "${CMAKE_CURRENT_LIST_DIR}/../common")

function(cannenv_smoke_kernel)
    cmake_parse_arguments(K "" "NAME;KERNEL;HOST;BINARY" "" ${ARGN})
    foreach(arg NAME KERNEL HOST BINARY)
        if(NOT K_${arg})
            message(FATAL_ERROR "cannenv_smoke_kernel: ${arg} is required")
        endif()
    endforeach()
    set(kernel_lib cannenv_${K_NAME}_kernels)

    if(CANNENV_FLOW STREQUAL "legacy")
        if(NOT SOC_VERSION)
            message(FATAL_ERROR "SOC_VERSION is not set (e.g. -DSOC_VERSION=Ascend910B3)")
        endif()
        if(NOT ASCEND_CANN_PACKAGE_PATH)
            message(FATAL_ERROR "ASCEND_CANN_PACKAGE_PATH is not set (the CANN toolkit root)")
        endif()
        if(NOT RUN_MODE)
            set(RUN_MODE npu)
        endif()
        if(RUN_MODE STREQUAL "cpu")
            # CPU debug: the kernel is compiled by the host compiler against tikicpulib.
            find_package(tikicpulib REQUIRED)
            add_executable(${K_BINARY} ${K_HOST} ${K_KERNEL})
            target_include_directories(${K_BINARY} PRIVATE ${CANNENV_SMOKE_COMMON})
            target_compile_definitions(${K_BINARY} PRIVATE ASCENDC_CPU_DEBUG=1 _GLIBCXX_USE_CXX11_ABI=0)
            target_compile_options(${K_BINARY} PRIVATE -std=c++17)
            target_link_libraries(${K_BINARY} PRIVATE tikicpulib::${SOC_VERSION} dl)
        elseif(RUN_MODE STREQUAL "npu" OR RUN_MODE STREQUAL "sim")
            foreach(dir compiler/tikcpp/ascendc_kernel_cmake tools/tikcpp/ascendc_kernel_cmake)
                if(EXISTS ${ASCEND_CANN_PACKAGE_PATH}/${dir}/ascendc.cmake)
                    set(ASCENDC_CMAKE_DIR ${ASCEND_CANN_PACKAGE_PATH}/${dir})
                    break()
                endif()
            endforeach()
            if(NOT ASCENDC_CMAKE_DIR)
                message(FATAL_ERROR "ascendc.cmake not found under ${ASCEND_CANN_PACKAGE_PATH}"
                                    "/{compiler,tools}/tikcpp/ascendc_kernel_cmake")
            endif()
            include(${ASCENDC_CMAKE_DIR}/ascendc.cmake)
            # Compiles the kernel with ccec/bisheng and generates aclrtlaunch_<kernel>.h.
            ascendc_library(${kernel_lib} SHARED ${K_KERNEL})
            add_executable(${K_BINARY} ${K_HOST})
            target_include_directories(${K_BINARY} PRIVATE
                ${CANNENV_SMOKE_COMMON}
                ${CMAKE_BINARY_DIR}/include/${kernel_lib}
                ${ASCEND_CANN_PACKAGE_PATH}/include
                ${ASCEND_CANN_PACKAGE_PATH}/runtime/include)
            target_link_directories(${K_BINARY} PRIVATE
                ${ASCEND_CANN_PACKAGE_PATH}/lib64 ${ASCEND_CANN_PACKAGE_PATH}/runtime/lib64)
            target_link_libraries(${K_BINARY} PRIVATE host_intf_pub ${kernel_lib} ascendcl dl)
        else()
            message(FATAL_ERROR "RUN_MODE must be npu, sim or cpu, got '${RUN_MODE}'")
        endif()

    elseif(CANNENV_FLOW STREQUAL "asc")
        # FindASC.cmake's ascendc_library marks the sources LANGUAGE ASC and, with
        # ENABLE_ACLRT_LAUNCH, writes aclrtlaunch_<kernel>.h to ${CMAKE_BINARY_DIR}/include/<target>.
        # --npu-arch is not added here: the ASC language injects --npu-arch=${CMAKE_ASC_ARCHITECTURES}
        # into every ASC compile by itself ([ASC]; research kernels.md §2b), so adding it again
        # passed it twice.
        set(ENABLE_ACLRT_LAUNCH ON)
        ascendc_library(${kernel_lib} SHARED ${K_KERNEL})
        add_executable(${K_BINARY} ${K_HOST})
        target_include_directories(${K_BINARY} PRIVATE
            ${CANNENV_SMOKE_COMMON}
            ${CMAKE_BINARY_DIR}/include/${kernel_lib}
            $ENV{ASCEND_HOME_PATH}/include)
        target_link_directories(${K_BINARY} PRIVATE $ENV{ASCEND_HOME_PATH}/lib64)
        target_link_libraries(${K_BINARY} PRIVATE ${kernel_lib} ascendcl)
    else()
        message(FATAL_ERROR "CANNENV_FLOW must be legacy or asc, got '${CANNENV_FLOW}' "
                            "(the C++ reference lives in reference/ and builds on its own)")
    endif()
    set_target_properties(${K_BINARY} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
endfunction()
